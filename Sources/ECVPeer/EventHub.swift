import Synchronization

/// An event with a kind, for `on(_:callback:)`.
protocol KindedEvent: Sendable {
    associatedtype Kind: Hashable & Sendable
    var kind: Kind { get }
    /// Whether a subscriber that arrives later is told too (OPEN, STREAM, CLOSE: states that
    /// last, so a callback set after the fact still hears of them, as the tutorial sets them).
    var isLasting: Bool { get }
}

/// The events of one object for both ways of listening: `AsyncStream`s and one callback per
/// kind. Every listener hears every event once, in the order they happened: events are queued
/// and delivered outside the lock by whichever thread finds the queue idle.
final class EventHub<Event: KindedEvent>: Sendable {
    typealias Callback = @Sendable (Event) -> Void

    private struct State {
        var streams: [Int: AsyncStream<Event>.Continuation] = [:]
        var callbacks: [Event.Kind: Callback] = [:]
        var lasting: [Event] = []
        var next = 0
        var pending: [Event] = []
        var draining = false
        var finished = false
        /// finish() came while a delivery ran: the drainer ends the streams after its last batch.
        var endAfterDrain = false
    }
    private let state = Mutex(State())

    func subscribe() -> AsyncStream<Event> {
        let (stream, continuation) = AsyncStream.makeStream(of: Event.self)
        let key = state.withLock { state -> Int? in
            guard !state.finished else { return nil }
            state.next += 1
            state.streams[state.next] = continuation
            // Replayed under the lock, before any later event reaches this stream.
            for event in state.lasting { continuation.yield(event) }
            return state.next
        }
        guard let key else {
            for event in state.withLock({ $0.lasting }) { continuation.yield(event) }
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in _ = self?.state.withLock { $0.streams.removeValue(forKey: key) } }
        return stream
    }

    /// Sets (or, with nil, removes) the callback for `kind`; a lasting event of that kind that
    /// already happened is delivered to it at once.
    func on(_ kind: Event.Kind, _ callback: Callback?) {
        let replay = state.withLock { state -> [Event] in
            state.callbacks[kind] = callback
            return callback == nil ? [] : state.lasting.filter { $0.kind == kind }
        }
        if let callback { replay.forEach(callback) }
    }

    /// Delivers `event`; `lasting` overrides the event's own `isLasting` (the error that ends a
    /// connection lasts, so a listener that arrives after the end still hears why).
    func emit(_ event: Event, lasting: Bool? = nil) {
        let drain = state.withLock { state -> Bool in
            guard !state.finished else { return false }
            if lasting ?? event.isLasting {
                // The latest of each kind: a reconnected peer's second OPEN replaces the first.
                state.lasting.removeAll { $0.kind == event.kind }
                state.lasting.append(event)
            }
            state.pending.append(event)
            defer { state.draining = true }
            return !state.draining
        }
        guard drain else { return }
        while true {
            let (batch, streams, callbacks) = state.withLock { state -> ([Event], [AsyncStream<Event>.Continuation], [Event.Kind: Callback]) in
                defer { state.pending = [] }
                if state.pending.isEmpty {
                    state.draining = false
                    guard state.endAfterDrain else { return ([], [], [:]) }
                    defer { state.streams = [:]; state.callbacks = [:] }
                    return ([], Array(state.streams.values), [:])
                }
                return (state.pending, Array(state.streams.values), state.callbacks)
            }
            if batch.isEmpty { streams.forEach { $0.finish() }; return }
            for event in batch {
                for stream in streams { stream.yield(event) }
                callbacks[event.kind]?(event)
            }
        }
    }

    /// Ends every stream (after what is queued); callbacks are dropped.
    func finish() {
        let streams = state.withLock { state -> [AsyncStream<Event>.Continuation] in
            state.finished = true
            if state.draining { state.endAfterDrain = true; return [] }
            state.callbacks = [:]
            defer { state.streams = [:] }
            return Array(state.streams.values)
        }
        streams.forEach { $0.finish() }
    }
}
