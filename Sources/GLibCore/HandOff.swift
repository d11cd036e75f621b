import Synchronization

/// The box of a Swift callback that GLib or GStreamer calls on another thread (the main loop, a
/// streaming thread).
///
/// GLib publishes the box under its own locks (the main context's, an appsink's, a pad's), which
/// ThreadSanitizer cannot see: GMutex is a futex inside uninstrumented code. TSan would then
/// report everything a callback reads that the registering thread wrote before, and `make sanitize`
/// would drown real races in those. `published()` (as the box is handed over) and `received()`
/// (at the start of each call) state that same hand-off as a release/acquire pair TSan follows.
/// They cost one atomic store per registration and one acquiring load per call.
open class HandOffBox: @unchecked Sendable {
    package init() {}
    // @unchecked Sendable: subclasses hold only `let` callbacks set in init, before `published()`.
    private let handedOver = Atomic<Bool>(false)

    /// Marks the box as handed over; call right before passing it to GLib or GStreamer.
    package final func published() -> Self {
        handedOver.store(true, ordering: .releasing)
        return self
    }

    /// Call at the start of every callback, before reading the box.
    @inline(__always)
    package final func received() {
        guard handedOver.load(ordering: .acquiring) else { preconditionFailure("a callback box reached GLib unpublished") }
    }
}
