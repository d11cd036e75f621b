import GLibCore
import Synchronization

/// An event with a kind, for `on(_:callback:)`.
protocol KindedEvent: Sendable {
    associatedtype Kind: Hashable & Sendable
    var kind: Kind { get }
    /// Whether a subscriber that arrives later is told too (OPEN, STREAM, CLOSE: states that
    /// last, so a callback set after the fact still hears of them, as the tutorial sets them).
    var isLasting: Bool { get }
}

/// The peer model's two ways of listening, `AsyncStream`s and one callback per kind (SkyWay's
/// `on(_:callback:)`), over the one fan-out primitive: lasting events are replayed, the latest of
/// each kind, and callbacks hear events in the streams' order.
final class EventHub<Event: KindedEvent>: Sendable {
    typealias Callback = @Sendable (Event) -> Void

    private let broadcaster = Broadcaster<Event>(replay: .latestPerKey)
    /// One callback per kind, and the key of its listener.
    private let callbacks = Mutex<[Event.Kind: Int]>([:])

    func subscribe() -> AsyncStream<Event> { broadcaster.subscribe() }

    /// Sets (or, with nil, removes) the callback for `kind`; a lasting event of that kind that
    /// already happened is delivered to it at once.
    func on(_ kind: Event.Kind, _ callback: Callback?) {
        let replaced = callbacks.withLock { $0.removeValue(forKey: kind) }
        if let replaced { broadcaster.removeListener(replaced) }
        guard let callback else { return }
        let key = broadcaster.addListener(replaying: { $0.kind == kind }) { event in if event.kind == kind { callback(event) } }
        callbacks.withLock { $0[kind] = key }
    }

    /// Delivers `event`; `lasting` overrides the event's own `isLasting` (the error that ends a
    /// connection lasts, so a listener that arrives after the end still hears why). The latest of
    /// each kind is kept: a reconnected peer's second OPEN replaces the first.
    func emit(_ event: Event, lasting: Bool? = nil) {
        broadcaster.yield(event, replayKey: lasting ?? event.isLasting ? String(describing: event.kind) : nil)
    }

    /// Ends every stream (after what is queued); callbacks are dropped.
    func finish() { broadcaster.finish() }
}
