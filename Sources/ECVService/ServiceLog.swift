import ECVProtocol
import Foundation
import Synchronization

/// One thing the service did: an answered request, a push, a relayed payload, a scripted action.
public struct ServiceLogEntry: Sendable, Hashable, CustomStringConvertible {
    public enum Category: String, Sendable, Hashable, CaseIterable {
        /// Start, stop, configuration.
        case lifecycle
        /// ECV REST answers (GetRtcId, DialEx, Hangup, polling, Queues).
        case rest
        /// Queue-socket opens, pushes and closes.
        case queueSocket
        /// Agent login/logout and agent-socket traffic.
        case agent
        /// Room joins, posted messages, leaves, room closing.
        case room
        /// Collider registrations and relayed payloads.
        case collider
        /// Something a script hook made happen.
        case script
        /// The PeerJS peer server: peers opening and leaving, refusals, expiries.
        case peer
    }

    /// Increases by one per entry over the service's life.
    public var sequence: Int
    public var time: Date
    public var category: Category
    public var message: String
    /// The call the entry is about, when there is one (filtering a busy log by call).
    public var rtcId: String?

    public var description: String {
        "#\(sequence) [\(category.rawValue)] \(message)"
    }
}

/// The service's event log: a bounded in-memory record plus live subscribers.
public final class ServiceEventLog: Sendable {
    private struct State {
        var entries: [ServiceLogEntry] = []
        var nextSequence = 1
        var subscribers: [UUID: AsyncStream<ServiceLogEntry>.Continuation] = [:]
    }

    private let state = Mutex(State())
    private let capacity: Int
    private let handler: (@Sendable (ServiceLogEntry) -> Void)?

    init(capacity: Int, handler: (@Sendable (ServiceLogEntry) -> Void)?) {
        self.capacity = max(1, capacity)
        self.handler = handler
    }

    /// The entries still kept, oldest first.
    public var entries: [ServiceLogEntry] { state.withLock { $0.entries } }

    /// The kept entries about one call.
    public func entries(rtcId: String) -> [ServiceLogEntry] {
        state.withLock { $0.entries.filter { $0.rtcId == rtcId } }
    }

    /// Every entry from now on, until the returned stream is dropped or the service stops.
    public func subscribe() -> AsyncStream<ServiceLogEntry> {
        let (stream, continuation) = AsyncStream<ServiceLogEntry>.makeStream(bufferingPolicy: .unbounded)
        let id = UUID()
        state.withLock { $0.subscribers[id] = continuation }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.subscribers.removeValue(forKey: id) }
        }
        return stream
    }

    /// Records one entry. Whatever clients put into `message` (names, reasons, attributes) is
    /// escaped and the entry cut to `LogText.defaultLimit` bytes (`LogText.sanitized`), so a log
    /// line can be neither forged nor blown up. Never pass a token or secret.
    func record(_ category: ServiceLogEntry.Category, _ message: String, rtcId: String? = nil) {
        let message = LogText.sanitized(message)
        let rtcId = rtcId.map { LogText.sanitized($0, limit: 160) }
        let entry = state.withLock { state -> ServiceLogEntry in
            let entry = ServiceLogEntry(sequence: state.nextSequence, time: Date(), category: category,
                                        message: message, rtcId: rtcId)
            state.nextSequence += 1
            state.entries.append(entry)
            if state.entries.count > capacity { state.entries.removeFirst(state.entries.count - capacity) }
            for subscriber in state.subscribers.values { subscriber.yield(entry) }
            return entry
        }
        handler?(entry)
    }

    func finishSubscribers() {
        let subscribers = state.withLock { state in
            defer { state.subscribers.removeAll() }
            return Array(state.subscribers.values)
        }
        subscribers.forEach { $0.finish() }
    }
}
