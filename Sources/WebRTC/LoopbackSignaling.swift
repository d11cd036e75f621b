import GLibCore
import GStreamer

/// Signaling between two peers in one process, in order, for tests and embedded use.
///
/// Each side's `send` is the other side's input; `connect` starts delivering to a peer. A filter
/// can hold messages back (to deliver candidates before the offer, or to simulate a lost peer).
package final class LoopbackSignaling: Sendable {
    package struct End: Sendable {
        let outbox: AsyncStream<SignalingMessage>.Continuation
        /// Hands a message to the other side (usable as `PeerConnection`'s `sendSignaling`).
        package func send(_ message: SignalingMessage) { outbox.yield(message) }
    }

    package let first: End
    package let second: End
    private let toFirst: AsyncStream<SignalingMessage>
    private let toSecond: AsyncStream<SignalingMessage>
    /// Messages for which this returns false are dropped; set before connecting.
    private let filter: Locked<(@Sendable (SignalingMessage, _ towardsFirst: Bool) -> Bool)?>
    private let tasks = Locked<[Task<Void, Never>]>([])

    package init() {
        let (toFirst, firstInbox) = AsyncStream.makeStream(of: SignalingMessage.self)
        let (toSecond, secondInbox) = AsyncStream.makeStream(of: SignalingMessage.self)
        self.toFirst = toFirst
        self.toSecond = toSecond
        first = End(outbox: secondInbox)
        second = End(outbox: firstInbox)
        filter = Locked(nil)
    }

    /// Drops every message for which `keep` returns false (e.g. to cut a peer off).
    package func setFilter(_ keep: @escaping @Sendable (SignalingMessage, _ towardsFirst: Bool) -> Bool) {
        filter.withLock { $0 = keep }
    }

    /// Delivers what the second end sends to `peer`, in order.
    package func connectFirst(to peer: PeerConnection) { start(toFirst, peer, towardsFirst: true) }
    /// Delivers what the first end sends to `peer`, in order.
    package func connectSecond(to peer: PeerConnection) { start(toSecond, peer, towardsFirst: false) }

    private func start(_ stream: AsyncStream<SignalingMessage>, _ peer: PeerConnection, towardsFirst: Bool) {
        let filter = self.filter
        let task = Task {
            for await message in stream {
                if let keep = filter.value, !keep(message, towardsFirst) { continue }
                await peer.receive(message)
            }
        }
        tasks.withLock { $0.append(task) }
    }

    /// Stops delivering.
    package func close() {
        first.outbox.finish()
        second.outbox.finish()
        for task in tasks.value { task.cancel() }
    }
}
