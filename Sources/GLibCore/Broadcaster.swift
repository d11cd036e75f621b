import Synchronization

/// Fans events out to any number of subscribers, each with its own `AsyncStream`.
///
/// Producers (signal handlers on streaming threads, bus watches) call `yield` and never wait:
/// each subscriber buffers independently. `finish()` ends every stream, and subscribing after
/// that returns a stream that is already finished.
public final class Broadcaster<Event: Sendable>: Sendable {
    private struct Subscribers {
        var next = 0
        var continuations: [Int: AsyncStream<Event>.Continuation] = [:]
        var finished = false
    }
    private let state = Mutex(Subscribers())

    public init() {}

    /// A new stream of every event yielded from now on, after `past` (what the owner kept of the
    /// events before: an owner that yields and records under one lock of its own, and subscribes
    /// under it too, hands out streams that miss nothing and repeat nothing).
    public func subscribe(replaying past: [Event] = [], bufferingNewest limit: Int? = nil) -> AsyncStream<Event> {
        let (stream, continuation) = AsyncStream.makeStream(
            of: Event.self, bufferingPolicy: limit.map { .bufferingNewest($0) } ?? .unbounded)
        for event in past { continuation.yield(event) }
        let key: Int? = state.withLock { state in
            guard !state.finished else { return nil }
            state.next += 1
            state.continuations[state.next] = continuation
            return state.next
        }
        guard let key else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.continuations.removeValue(forKey: key) }
        }
        return stream
    }

    public func yield(_ event: Event) {
        let targets = state.withLock { Array($0.continuations.values) }
        for continuation in targets { continuation.yield(event) }
    }

    /// Ends every subscriber's stream; later events are dropped.
    public func finish() {
        let targets = state.withLock { state -> [AsyncStream<Event>.Continuation] in
            state.finished = true
            defer { state.continuations.removeAll() }
            return Array(state.continuations.values)
        }
        for continuation in targets { continuation.finish() }
    }

    public var isFinished: Bool { state.withLock { $0.finished } }
}
