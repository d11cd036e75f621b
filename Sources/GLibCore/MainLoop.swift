internal import CGLib
import Foundation
import Synchronization

/// The GLib main loop the library runs on its own thread.
///
/// Bus watches, timers, libsoup I/O and WebSocket callbacks are dispatched here, so nothing in the
/// binding polls and no cooperative-pool thread ever blocks on GLib. It runs the process's global
/// default `GMainContext`, which is the context GStreamer and libsoup attach to when no
/// thread-default context is pushed.
///
/// Nothing here blocks waiting for the loop: `perform` and the timers return at once, `run`
/// suspends the caller. Main-loop-only state belongs to `MainLoopActor`, whose jobs run here.
package final class MainLoop: Sendable {
    /// The loop, running from its first use.
    package static let shared: MainLoop = {
        let loop = MainLoop()
        loop.start()
        return loop
    }()

    /// Guards the thread handle; the loop itself is thread-safe GLib state.
    private let thread = Mutex<Thread?>(nil)
    private let threadID = Atomic<UInt>(0)
    // @unchecked Sendable: the GMainLoop is created once, lives for the whole process and is
    // only passed to g_main_loop_run, which GLib allows from any thread.
    private struct LoopHandle: @unchecked Sendable { let pointer: OpaquePointer }
    private let loop: LoopHandle

    private init() {
        loop = LoopHandle(pointer: g_main_loop_new(g_main_context_default(), 0))
    }

    private func start() {
        thread.withLock { thread in
            guard thread == nil else { return }
            let started = DispatchSemaphore(value: 0)
            let newThread = Thread { [self] in
                threadID.store(UInt(pthread_self()), ordering: .releasing)
                started.signal()
                g_main_loop_run(self.loop.pointer)
            }
            newThread.name = "ecv-glib-main"
            newThread.stackSize = 1 << 20
            newThread.start()
            started.wait()
            thread = newThread
        }
    }

    /// True on the main-loop thread.
    package var isCurrentThread: Bool {
        threadID.load(ordering: .acquiring) == UInt(pthread_self())
    }

    /// Runs `body` on the main-loop thread, soon. Never blocks the caller.
    package func perform(_ body: @escaping @Sendable () -> Void) {
        let box = Unmanaged.passRetained(CallbackBox(body).published()).toOpaque()
        let source = g_idle_source_new()
        g_source_set_priority(source, G_PRIORITY_DEFAULT)
        g_source_set_callback(source, { data in
            let box = Unmanaged<CallbackBox>.fromOpaque(data!).takeUnretainedValue()
            box.received()
            box.body()
            return 0 // G_SOURCE_REMOVE
        }, box, { data in
            Unmanaged<CallbackBox>.fromOpaque(data!).release()
        })
        g_source_attach(source, g_main_context_default())
        g_source_unref(source)
    }

    /// Runs `body` on the main-loop thread and resumes the caller with its result.
    package func run<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        if isCurrentThread { return body() }
        return await withCheckedContinuation { continuation in
            perform { continuation.resume(returning: body()) }
        }
    }

    /// Runs `body` on the main-loop thread, rethrowing what it throws.
    package func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        let result: Result<T, any Error> = await run { Result { try body() } }
        return try result.get()
    }

    /// Calls `body` on the main-loop thread after `delay`; cancel the returned timer to stop it.
    @discardableResult
    package func schedule(after delay: Duration, _ body: @escaping @Sendable () -> Void) -> Timer {
        makeTimer(after: delay) { body(); return false }
    }

    /// Calls `body` on the main-loop thread every `interval` until it returns false or the timer is cancelled.
    package func schedule(every interval: Duration, _ body: @escaping @Sendable () -> Bool) -> Timer {
        makeTimer(after: interval, body)
    }

    private func makeTimer(after delay: Duration, _ body: @escaping @Sendable () -> Bool) -> Timer {
        let milliseconds = max(0, delay.components.seconds * 1000 + delay.components.attoseconds / 1_000_000_000_000_000)
        return attach(g_timeout_source_new(guint(clamping: milliseconds))!, callback: { data in TimerBox.fire(data) }, body)
    }

    /// Calls `body` on the main-loop thread whenever `descriptor` has input, its end or an error,
    /// until it returns false or the returned handle is cancelled; what `body` holds is released
    /// once the watch is gone. The main loop's own poll, not a libdispatch read source: tearing
    /// those down on Linux races their epoll bookkeeping (swift-corelibs-libdispatch#949). Close
    /// the descriptor only after the watch is gone (from `body`'s captures being released).
    package func watchInput(of descriptor: Int32, _ body: @escaping @Sendable () -> Bool) -> Timer {
        let source = g_unix_fd_source_new(descriptor, GIOCondition(G_IO_IN.rawValue | G_IO_HUP.rawValue | G_IO_ERR.rawValue))!
        let callback: GUnixFDSourceFunc = { _, _, data in TimerBox.fire(data) }
        return attach(source, callback: unsafeBitCast(callback, to: GSourceFunc.self), body)
    }

    /// Attaches `source` (taking its reference) to the default context with `body` in a box that
    /// `callback` fires and the source releases when it goes; the handle cancels it.
    private func attach(_ source: UnsafeMutablePointer<GSource>, callback: GSourceFunc, _ body: @escaping @Sendable () -> Bool) -> Timer {
        let timer = Timer()
        let box = Unmanaged.passRetained(TimerBox(timer: timer, body: body).published()).toOpaque()
        g_source_set_callback(source, callback, box, { data in
            Unmanaged<TimerBox>.fromOpaque(data!).release()
        })
        timer.attach(source)
        g_source_attach(source, g_main_context_default())
        g_source_unref(source)
        return timer
    }

    /// A pending or repeating main-loop timer, or a descriptor watch. Cancelling it is idempotent
    /// and thread-safe.
    package final class Timer: Sendable {
        private let state = Mutex<(cancelled: Bool, source: SourceHandle?)>((false, nil))

        var isCancelled: Bool { state.withLock { $0.cancelled } }

        fileprivate func attach(_ source: UnsafeMutablePointer<GSource>) {
            g_source_ref(source)
            state.withLock { $0.source = SourceHandle(source) }
        }

        package func cancel() {
            let source = state.withLock { state -> SourceHandle? in
                state.cancelled = true
                defer { state.source = nil }
                return state.source
            }
            if let source {
                g_source_destroy(source.pointer)
                g_source_unref(source.pointer)
            }
        }

        deinit {
            // The source holds the timer through its callback box, so a timer that is still
            // referenced by a live source is never deinitialised; only the reference is left.
            if let source = state.withLock({ $0.source }) { g_source_unref(source.pointer) }
        }
    }
}

/// A reference to a GSource. GSources are thread-safe GLib objects.
// @unchecked Sendable: wraps an owned GSource reference; g_source_destroy/unref are thread-safe.
struct SourceHandle: @unchecked Sendable {
    let pointer: UnsafeMutablePointer<GSource>
    init(_ pointer: UnsafeMutablePointer<GSource>) { self.pointer = pointer }
}

// @unchecked Sendable: only `let` fields of Sendable types, set in init before `published()` (see `HandOffBox`).
private final class CallbackBox: HandOffBox, @unchecked Sendable {
    let body: @Sendable () -> Void
    init(_ body: @escaping @Sendable () -> Void) { self.body = body }
}

// @unchecked Sendable: only `let` fields of Sendable types, set in init before `published()` (see `HandOffBox`).
private final class TimerBox: HandOffBox, @unchecked Sendable {
    let timer: MainLoop.Timer
    let body: @Sendable () -> Bool
    init(timer: MainLoop.Timer, body: @escaping @Sendable () -> Bool) {
        self.timer = timer
        self.body = body
    }

    /// A timer's or watch's callback: runs the body unless cancelled; whether the source stays.
    static func fire(_ data: UnsafeMutableRawPointer?) -> gboolean {
        let box = Unmanaged<TimerBox>.fromOpaque(data!).takeUnretainedValue()
        box.received()
        guard !box.timer.isCancelled else { return 0 }
        return box.body() ? 1 : 0
    }
}
