import Synchronization

/// The one way an object's events reach any number of listeners, each with its own
/// `AsyncStream` or callback: every listener hears every event once, in one order, whichever
/// threads produce them.
///
/// Producers (signal handlers on streaming threads, bus watches, tasks) call `yield` and never
/// wait: events are queued and delivered outside the lock by whichever producer finds the queue
/// idle, so two producers' events cannot reach two listeners in different orders, and a listener
/// may yield again from its callback. What a late subscriber is told of the past is the
/// broadcaster's `Replay` policy: nothing, every event so far, or the latest of each key (the
/// states that last, as a peer's OPEN or a connection's CLOSE). `finish()` ends every stream after
/// what is queued; subscribing after that returns a stream with the replay, already finished.
package final class Broadcaster<Event: Sendable>: Sendable {
    /// What a subscriber is told of the events before it subscribed.
    package enum Replay: Sendable {
        /// Nothing: only the events from now on.
        case none
        /// Every event so far, in order (an owner whose listeners subscribe late, as a bot does).
        case all
        /// The latest event of each key given to `yield(_:replayKey:)` (events without a key are
        /// not replayed).
        case latestPerKey
    }

    package typealias Callback = @Sendable (Event) -> Void

    private struct State {
        var next = 0
        var streams: [Int: AsyncStream<Event>.Continuation] = [:]
        var callbacks: [Int: Callback] = [:]
        var replayed: [(key: String?, event: Event)] = []
        var pending: [Event] = []
        var draining = false
        var finished = false
        /// finish() came while a delivery ran: the drainer ends the streams after its last batch.
        var endAfterDrain = false
    }
    private let state = Mutex(State())
    private let replay: Replay

    package init(replay: Replay = .none) { self.replay = replay }

    /// A new stream of every event from now on, after the replay (unless `replaying` is false:
    /// a wait for the answer to a request about to be sent wants no earlier answer).
    package func subscribe(replaying: Bool = true, bufferingNewest limit: Int? = nil) -> AsyncStream<Event> {
        let (stream, continuation) = AsyncStream.makeStream(of: Event.self, bufferingPolicy: limit.map { .bufferingNewest($0) } ?? .unbounded)
        let key = state.withLock { state -> Int? in
            // Replayed under the lock, before any later event can reach this stream.
            if replaying { for past in state.replayed { continuation.yield(past.event) } }
            guard !state.finished else { return nil }
            state.next += 1
            state.streams[state.next] = continuation
            return state.next
        }
        guard let key else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in _ = self?.state.withLock { $0.streams.removeValue(forKey: key) } }
        return stream
    }

    /// Calls `callback` with every event from now on, in the same order the streams get them,
    /// after the replayed events `replayFilter` keeps. Returns a key for `removeListener`.
    @discardableResult
    package func addListener(replaying replayFilter: (Event) -> Bool = { _ in false }, _ callback: @escaping Callback) -> Int {
        let (key, past) = state.withLock { state -> (Int, [Event]) in
            state.next += 1
            if !state.finished { state.callbacks[state.next] = callback }
            return (state.next, state.replayed.map(\.event).filter(replayFilter))
        }
        past.forEach(callback)
        return key
    }

    package func removeListener(_ key: Int) { _ = state.withLock { $0.callbacks.removeValue(forKey: key) } }

    /// Delivers `event` to every listener. `replayKey` (for `.latestPerKey`) names what it
    /// replaces for late subscribers; nil: it is not replayed.
    package func yield(_ event: Event, replayKey: String? = nil) {
        let drain = state.withLock { state -> Bool in
            guard !state.finished else { return false }
            switch replay {
            case .none: break
            case .all: state.replayed.append((nil, event))
            case .latestPerKey:
                if let replayKey {
                    state.replayed.removeAll { $0.key == replayKey }
                    state.replayed.append((replayKey, event))
                }
            }
            state.pending.append(event)
            defer { state.draining = true }
            return !state.draining
        }
        if drain { deliverPending() }
    }

    /// Delivers what is queued until the queue is empty; one producer at a time runs it.
    private func deliverPending() {
        while true {
            let (batch, streams, callbacks) = state.withLock { state -> ([Event], [AsyncStream<Event>.Continuation], [Callback]) in
                defer { state.pending = [] }
                if state.pending.isEmpty {
                    state.draining = false
                    guard state.endAfterDrain else { return ([], [], []) }
                    defer { state.streams = [:]; state.callbacks = [:] }
                    return ([], Array(state.streams.values), [])
                }
                return (state.pending, Array(state.streams.values), Array(state.callbacks.values))
            }
            if batch.isEmpty { streams.forEach { $0.finish() }; return }
            for event in batch {
                for stream in streams { stream.yield(event) }
                for callback in callbacks { callback(event) }
            }
        }
    }

    /// Ends every stream (after what is queued); later events are dropped, callbacks removed.
    package func finish() {
        let streams = state.withLock { state -> [AsyncStream<Event>.Continuation] in
            state.finished = true
            if state.draining { state.endAfterDrain = true; return [] }
            state.callbacks = [:]
            defer { state.streams = [:] }
            return Array(state.streams.values)
        }
        streams.forEach { $0.finish() }
    }

    package var isFinished: Bool { state.withLock { $0.finished } }

    /// What a subscriber would be replayed now (every event so far, for `.all`).
    package var history: [Event] { state.withLock { $0.replayed.map(\.event) } }
}
