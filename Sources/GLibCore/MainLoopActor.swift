/// The GLib main loop as a Swift global actor: code isolated to it runs on the loop's thread, so
/// the compiler, not a run-time `precondition`, keeps main-loop-only state on that thread.
///
/// Its executor enqueues each job as an idle source on the default `GMainContext` (the machinery
/// of `MainLoop.perform`), so jobs run one at a time, in the order they were enqueued, between
/// GLib's own dispatches (I/O, timers, bus watches). Nothing waits for the loop: `await` on an
/// isolated function suspends the caller until its job ran.
///
/// GLib callbacks (signal handlers, async-call completions, timers) also run on the loop thread,
/// but outside any job; they enter the actor with `MainLoopActor.assumeIsolated`, which checks
/// the thread.
@globalActor
package actor MainLoopActor {
    package static let shared = MainLoopActor()

    private static let executor = MainLoopExecutor()

    package nonisolated var unownedExecutor: UnownedSerialExecutor { Self.executor.asUnownedSerialExecutor() }

    /// Runs `body` on the actor and returns its result (the counterpart of `MainActor.run`).
    @MainLoopActor
    package static func run<T: Sendable>(_ body: @MainLoopActor () throws -> T) async rethrows -> T {
        try body()
    }

    /// Runs `body` as isolated to the actor, from synchronous code that is already on the loop
    /// thread (a GLib callback); stops the process anywhere else.
    package static func assumeIsolated<T: Sendable>(_ body: @MainLoopActor () throws -> T,
                                                   file: StaticString = #fileID, line: UInt = #line) rethrows -> T {
        typealias Isolated = @MainLoopActor () throws -> T
        typealias Plain = () throws -> T
        shared.preconditionIsolated("not on the GLib main-loop thread", file: file, line: line)
        // Checked just above: this thread is the actor's executor, so the isolated body may be
        // called as a plain one (what `MainActor.assumeIsolated` does).
        return try withoutActuallyEscaping(body) { (body: @escaping Isolated) throws -> T in
            try unsafeBitCast(body, to: Plain.self)()
        }
    }

    /// Runs `body` on the actor soon, after everything enqueued before it (actor jobs and
    /// `MainLoop.perform` bodies alike); never blocks, and unlike `run` does not wait. Calls from
    /// one thread run in the order they were made.
    package static func perform(_ body: @escaping @MainLoopActor () -> Void) {
        MainLoop.shared.perform { assumeIsolated(body) }
    }

    /// `MainLoop.schedule(after:_:)` with a body isolated to the actor.
    @discardableResult
    package static func schedule(after delay: Duration, _ body: @escaping @MainLoopActor () -> Void) -> MainLoop.Timer {
        MainLoop.shared.schedule(after: delay) { assumeIsolated(body) }
    }

    /// `MainLoop.schedule(every:_:)` with a body isolated to the actor.
    package static func schedule(every interval: Duration, _ body: @escaping @MainLoopActor () -> Bool) -> MainLoop.Timer {
        MainLoop.shared.schedule(every: interval) { assumeIsolated(body) }
    }
}

/// Runs `MainLoopActor`'s jobs on the GLib main-loop thread.
final class MainLoopExecutor: SerialExecutor {
    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        MainLoop.shared.perform { [self] in job.runSynchronously(on: asUnownedSerialExecutor()) }
    }

    func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    /// The loop thread is the only thread this executor runs jobs on, and it runs one thing at a
    /// time: being on it is being isolated to the actor, in a job or in a GLib callback.
    func isIsolatingCurrentContext() -> Bool? {
        MainLoop.shared.isCurrentThread
    }

    func checkIsolated() {
        precondition(MainLoop.shared.isCurrentThread, "not on the GLib main-loop thread")
    }
}
