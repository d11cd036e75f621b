import Synchronization

/// A result that is delivered exactly once to one awaiting task, from any thread.
///
/// C callbacks (promises, bus watches, timers) may fire more than once, race each other or never
/// fire; `OneShot` turns all of those into one resumption: the first `resolve` wins and later ones
/// are ignored, so a continuation is never resumed twice or leaked.
package final class OneShot<Success: Sendable, Failure: Error>: Sendable {
    private enum Slot {
        case empty
        case waiting(CheckedContinuation<Success, any Error>)
        case resolved(Result<Success, Failure>)
        case consumed
    }

    private let slot = Mutex(Slot.empty)

    package init() {}

    /// Delivers `result` if nothing was delivered before; returns whether this call won.
    @discardableResult
    package func resolve(_ result: Result<Success, Failure>) -> Bool {
        let waiting: CheckedContinuation<Success, any Error>? = slot.withLock { slot in
            switch slot {
            case .empty:
                slot = .resolved(result)
                return nil
            case .waiting(let continuation):
                slot = .consumed
                return continuation
            case .resolved, .consumed:
                return nil
            }
        }
        waiting?.resume(with: result.mapError { $0 as any Error })
        return true
    }

    package var isResolved: Bool {
        slot.withLock { if case .empty = $0 { false } else if case .waiting = $0 { false } else { true } }
    }

    /// Waits for the result. Only one task may wait.
    package func value() async throws(Failure) -> Success {
        do {
            return try await withCheckedThrowingContinuation { continuation in
                let ready: Result<Success, Failure>? = slot.withLock { slot in
                    switch slot {
                    case .empty:
                        slot = .waiting(continuation)
                        return nil
                    case .resolved(let result):
                        slot = .consumed
                        return result
                    case .waiting, .consumed:
                        preconditionFailure("OneShot awaited twice")
                    }
                }
                if let ready { continuation.resume(with: ready.mapError { $0 as any Error }) }
            }
        } catch {
            throw error as! Failure
        }
    }
}
