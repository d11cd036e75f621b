import ECVProtocol
import Synchronization

/// DialEx answers by the caller's `Idempotency-Key` (docs/protocol.md §9): a DialEx retried
/// because its answer was lost gets the first attempt's answer again, so a retry never creates a
/// second call nor fails as `ALREADY_DIALED`. Only a key seen with the same rtcId replays.
///
/// Bounded: the newest `capacity` keys are kept (first in, first forgotten); a retry comes within
/// the caller's reconnect window, long before its key could be pushed out.
final class DialReplay: Sendable {
    private struct Entries {
        var answers: [String: (rtcId: String, response: DialExResponse)] = [:]
        var order: [String] = []
    }
    private let entries = Mutex(Entries())
    let capacity: Int

    /// Longest key accepted (a UUID is 36 characters).
    static let maxKeyLength = 128

    init(capacity: Int) { self.capacity = max(1, capacity) }

    /// Why `key` cannot be used as an idempotency key; nil when it can.
    static func problem(in key: String) -> ProtocolError? {
        guard !key.isEmpty, key.utf8.count <= maxKeyLength,
              key.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F }) else {
            return .invalidValue(field: ECVAPI.idempotencyKeyHeader,
                                 reason: "must be 1-\(maxKeyLength) printable ASCII characters without spaces")
        }
        return nil
    }

    /// The answer given to the first DialEx with this key, when it named the same rtcId.
    func answer(key: String, rtcId: String) -> DialExResponse? {
        entries.withLock { entries in
            guard let entry = entries.answers[key], entry.rtcId == rtcId else { return nil }
            return entry.response
        }
    }

    func remember(key: String, rtcId: String, response: DialExResponse) {
        entries.withLock { entries in
            guard entries.answers.updateValue((rtcId, response), forKey: key) == nil else { return }
            entries.order.append(key)
            if entries.order.count > capacity {
                let evicted = entries.order.removeFirst()
                entries.answers[evicted] = nil
            }
        }
    }
}
