/// Runs an app's callbacks one at a time, in the order they were queued, on a task of its own:
/// the "one serial context" the seed's handlers and delegates are promised, which no producer
/// waits for (a media thread, the main loop) and which a slow callback never stalls.
/// Used by `ECVModules.onCallEvent` and EnQualify's delegate.
package final class SerialDelivery: Sendable {
    package typealias Delivery = @Sendable () -> Void
    private let continuation: AsyncStream<Delivery>.Continuation
    private let worker: Task<Void, Never>

    package init() {
        let (stream, continuation) = AsyncStream.makeStream(of: Delivery.self)
        self.continuation = continuation
        worker = Task.detached {
            for await delivery in stream { delivery() }
        }
    }

    deinit { continuation.finish() }

    /// Queues `delivery` after everything queued before it.
    package func enqueue(_ delivery: @escaping Delivery) { continuation.yield(delivery) }

    /// Returns once everything queued before it was delivered.
    package func drained() async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            if case .terminated = continuation.yield({ done.resume() }) { done.resume() }
        }
    }
}
