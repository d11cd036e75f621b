import Foundation
import Synchronization

/// The engine's notion of time: seconds on a monotonic timeline. Injected so tests script time.
public protocol ACDClock: Sendable {
    func now() -> Double
}

/// Real time, counted from the clock's creation.
public struct SystemACDClock: ACDClock {
    private let origin = ContinuousClock.now

    public init() {}

    public func now() -> Double {
        let elapsed = ContinuousClock.now - origin
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }
}

/// Time that moves only when told to.
public final class ManualACDClock: ACDClock {
    private let current: Mutex<Double>

    public init(_ start: Double = 0) { current = Mutex(start) }

    public func now() -> Double { current.withLock { $0 } }

    /// Moves time forward; never backward (a monotonic clock).
    public func advance(by seconds: Double) {
        precondition(seconds >= 0, "a monotonic clock cannot go back")
        current.withLock { $0 += seconds }
    }
}

/// Makes the ids the engine hands out.
struct IdentifierSource {
    let style: ACDIdentifierStyle
    private var counters: [String: Int] = [:]

    init(style: ACDIdentifierStyle) { self.style = style }

    mutating func rtcId() -> String { make("rtc", randomHex: 32) }
    mutating func interactionId() -> String { make("ix", randomHex: 16) }
    mutating func agentId() -> String { make("agent", randomHex: 8) }
    mutating func token() -> String { make("token", randomHex: 64) }

    private mutating func make(_ prefix: String, randomHex length: Int) -> String {
        switch style {
        case .sequential:
            let next = counters[prefix, default: 0] + 1
            counters[prefix] = next
            return "\(prefix)-\(next)"
        case .random:
            var hex = ""
            while hex.count < length {
                hex += UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
            }
            let body = String(hex.prefix(length))
            return prefix == "rtc" || prefix == "token" ? body : "\(prefix)-\(body)"
        }
    }
}
