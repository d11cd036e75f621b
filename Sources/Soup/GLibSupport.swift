internal import CGLibShims
internal import CSoup
internal import GLibCore
import Synchronization

// libsoup objects are not thread-safe: every SoupSession, SoupServer, SoupMessage and
// SoupWebsocketConnection this binding creates is created, used and released on the GLib
// main-loop thread. The classes that hold them are isolated to `MainLoopActor`, so the compiler
// keeps them there; GLib callbacks enter the actor through `onMainLoop` / `assumeIsolated`.

/// Calls `body` isolated to `MainLoopActor` from a GLib callback, with the callback's context
/// object (nil: nothing is called) and its C arguments.
///
/// GLib runs these callbacks on the loop thread, outside any actor job; `assumeIsolated` checks
/// that. The arguments are GLib's, borrowed for this one call on this one thread. Region checking
/// cannot see that through a C function pointer: to it, handing them to the isolated body looks
/// like sending them to another thread, hence the `nonisolated(unsafe)`.
@inline(__always)
func onMainLoop<Context: AnyObject & Sendable, Arguments, Result: Sendable>(
    _ context: Context?, _ arguments: Arguments, _ body: @MainLoopActor (Context, Arguments) -> Result) -> Result? {
    guard let context else { return nil }
    nonisolated(unsafe) let arguments = arguments
    return MainLoopActor.assumeIsolated { body(context, arguments) }
}

/// One strong reference to a GObject owned by the binding and released on the main-loop thread.
///
/// The GStreamer binding's `Object` is not reused here: its initialiser is internal to that module,
/// and it releases its reference on whichever thread drops it, whereas libsoup objects must also
/// be *finalised* on the main-loop thread. So the last unref hops there.
// @unchecked Sendable: `raw` is immutable. libsoup objects behind it are only used on the
// main-loop thread; the few objects also touched elsewhere (GCancellable, GTlsCertificate,
// GTlsDatabase) are ones GLib documents as thread-safe. The reference is released on the loop.
// Not isolated to `MainLoopActor`: which threads may use the object depends on its GType, which
// the type system does not see (a `TLSIdentity` is built and read on any thread), and the handle
// itself is handed to C as a bare pointer.
final class OwnedGObject: @unchecked Sendable {
    let raw: UnsafeMutableRawPointer

    /// Adopts a reference the caller owns (transfer full, not floating).
    init(adopting raw: UnsafeMutableRawPointer) {
        self.raw = raw
        SoupDiagnostics.track(raw)
    }

    /// Takes an extra reference to a borrowed pointer (transfer none).
    init(retaining raw: UnsafeMutableRawPointer) {
        g_object_ref(raw)
        self.raw = raw
        SoupDiagnostics.track(raw)
    }

    var opaque: OpaquePointer { OpaquePointer(raw) }

    /// The pointer typed as the C struct libsoup/GIO declare for it (`SoupSession`, `GInputStream`, …).
    func typed<T>(_ type: T.Type) -> UnsafeMutablePointer<T> { raw.assumingMemoryBound(to: T.self) }

    deinit {
        if MainLoop.shared.isCurrentThread {
            g_object_unref(raw)
        } else {
            let address = UInt(bitPattern: raw)
            MainLoop.shared.perform { g_object_unref(UnsafeMutableRawPointer(bitPattern: address)) }
        }
    }
}

/// Counts for leak tests, not for program logic.
public enum SoupDiagnostics {
    private static let live = Atomic<Int>(0)

    /// GObjects the binding has held that GLib has not finalised yet. Returns to its earlier value
    /// once every client, server and connection created since is gone and the loop has run.
    public static var liveObjectCount: Int { live.load(ordering: .relaxed) }

    /// Counts `object` until GLib finalises it (a weak-ref notify per wrapper, so wrapping the same
    /// object twice counts it twice and releases it twice).
    static func track(_ object: UnsafeMutableRawPointer) {
        live.add(1, ordering: .relaxed)
        g_object_weak_ref(object.assumingMemoryBound(to: GObject.self), { _, _ in
            SoupDiagnostics.live.subtract(1, ordering: .relaxed)
        }, nil)
    }
}

/// The signal handlers one owner connected to one GObject, disconnected together.
///
/// The GStreamer binding's `Object.connect` marshals every argument into a `Value`, which cannot
/// carry what libsoup signals pass (a `GError`, a `GTlsCertificate` to hash, a `GBytes` payload
/// without a copy per hop); these handlers are typed C callbacks instead.
///
/// Each handler's context object is retained by GLib (through the closure's destroy notify) until
/// the handler is disconnected, so a context can never be used after it is freed. Owners call
/// `disconnectAll()` when they are done; `deinit` does it as a last resort.
@MainLoopActor
final class SignalHandlerSet {
    private let instance: OwnedGObject
    private var handlerIDs: [gulong] = []

    init(on instance: OwnedGObject) { self.instance = instance }

    /// Connects a C callback whose last parameter receives `context`.
    /// An unknown signal name is a programming error in this binding, so it stops the process.
    func connect(_ signal: String, _ callback: GCallback, context: AnyObject) {
        let data = Unmanaged.passRetained(context).toOpaque()
        let id = g_signal_connect_data(instance.raw, signal, callback, data, { data, _ in
            guard let data else { return }
            Unmanaged<AnyObject>.fromOpaque(data).release()
        }, GConnectFlags(rawValue: 0))
        precondition(id != 0, "no signal \(signal) on \(String(cString: g_type_name(ecv_object_type(instance.raw))))")
        handlerIDs.append(id)
    }

    func disconnectAll() {
        let ids = handlerIDs
        handlerIDs = []
        Self.disconnect(ids, from: instance)
    }

    private static func disconnect(_ ids: [gulong], from instance: OwnedGObject) {
        for id in ids where g_signal_handler_is_connected(instance.raw, id) != 0 {
            g_signal_handler_disconnect(instance.raw, id)
        }
    }

    /// Not an `isolated deinit`: that would enqueue a job for every set dropped outside one (in a
    /// GLib callback, as most are), though owners have usually disconnected everything already.
    deinit {
        guard !handlerIDs.isEmpty else { return }
        let ids = handlerIDs, instance = instance
        if MainLoop.shared.isCurrentThread {
            MainLoopActor.assumeIsolated { Self.disconnect(ids, from: instance) }
        } else {
            MainLoopActor.perform { Self.disconnect(ids, from: instance) }
        }
    }
}

/// Recovers the context object passed to `SignalHandlerSet.connect` or to an async call.
@inline(__always)
func context<T: AnyObject>(_ data: UnsafeMutableRawPointer?, as type: T.Type) -> T? {
    guard let data else { return nil }
    return Unmanaged<AnyObject>.fromOpaque(data).takeUnretainedValue() as? T
}

/// Retains `object` for the duration of one GLib async call; balance with `releaseAsyncContext`.
@inline(__always)
func retainAsyncContext(_ object: AnyObject) -> UnsafeMutableRawPointer {
    Unmanaged<AnyObject>.passRetained(object).toOpaque()
}

/// Ends the retain taken by `retainAsyncContext` and returns the object.
@inline(__always)
func releaseAsyncContext<T: AnyObject>(_ data: UnsafeMutableRawPointer?, as type: T.Type) -> T? {
    guard let data else { return nil }
    return Unmanaged<AnyObject>.fromOpaque(data).takeRetainedValue() as? T
}

/// A `GError` read into Swift and freed.
struct GLibError: Error, Sendable, CustomStringConvertible {
    let domain: GQuark
    let code: Int32
    let message: String

    /// Takes ownership of `error` and frees it.
    init(taking error: UnsafeMutablePointer<GError>) {
        domain = error.pointee.domain
        code = error.pointee.code
        message = error.pointee.message.map { String(cString: $0) } ?? "unknown GLib error"
        g_error_free(error)
    }

    /// Reads `error` without taking ownership (signal arguments).
    init(borrowing error: UnsafePointer<GError>) {
        domain = error.pointee.domain
        code = error.pointee.code
        message = error.pointee.message.map { String(cString: $0) } ?? "unknown GLib error"
    }

    func matches(_ domain: GQuark, _ code: Int32) -> Bool { self.domain == domain && self.code == code }
    var isCancellation: Bool { matches(g_io_error_quark(), Int32(G_IO_ERROR_CANCELLED.rawValue)) }

    var description: String { message }
}

/// Copies the contents of a `GBytes` (borrowed) into Swift.
func copyBytes(_ bytes: OpaquePointer) -> [UInt8] {
    var size: gsize = 0
    guard let data = g_bytes_get_data(bytes, &size), size > 0 else { return [] }
    return Array(UnsafeRawBufferPointer(start: data, count: Int(size)))
}

/// A new `GBytes` (transfer full) holding a copy of `bytes`.
func makeGBytes(_ bytes: [UInt8]) -> OpaquePointer {
    bytes.withUnsafeBytes { g_bytes_new($0.baseAddress, gsize($0.count)) }
}

extension Duration {
    /// Whole milliseconds, never negative.
    var wholeMilliseconds: Int64 {
        let (seconds, attoseconds) = components
        return max(0, seconds * 1000 + attoseconds / 1_000_000_000_000_000)
    }

    /// Whole seconds rounded up, for libsoup properties that only take seconds.
    var secondsRoundedUp: UInt32 {
        UInt32(clamping: (wholeMilliseconds + 999) / 1000)
    }
}
