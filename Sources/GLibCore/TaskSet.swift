import Synchronization

/// The tasks an object runs for its life (event relays, timers, watches): kept until the object
/// closes, then cancelled together. A task kept after the close is cancelled at once, so an
/// object that closes while one of its steps is still starting never leaves that step's task
/// running. Every call plumbing object (the call leg, the products' facades) keeps its tasks here.
package final class TaskSet: Sendable {
    private struct State {
        var tasks: [Task<Void, Never>] = []
        var closed = false
    }
    private let state = Mutex(State())

    package init() {}

    /// Keeps `task` until `cancelAll()`; cancels it at once when that already ran.
    package func keep(_ task: Task<Void, Never>) {
        let closed = state.withLock { state -> Bool in
            guard !state.closed else { return true }
            state.tasks.append(task)
            return false
        }
        if closed { task.cancel() }
    }

    /// Starts `operation` as a task kept here.
    package func run(_ operation: @escaping @Sendable () async -> Void) {
        keep(Task { await operation() })
    }

    /// Cancels every task kept so far and every one kept later. Idempotent.
    package func cancelAll() {
        let tasks = state.withLock { state -> [Task<Void, Never>] in
            state.closed = true
            defer { state.tasks = [] }
            return state.tasks
        }
        for task in tasks { task.cancel() }
    }

    package var isCancelled: Bool { state.withLock { $0.closed } }
}
