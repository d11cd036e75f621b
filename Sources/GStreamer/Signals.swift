internal import CGLibShims
internal import CGStreamer
internal import CGStreamerShims
import Synchronization

/// The arguments a signal was emitted with; index 0 is the emitting object itself.
package struct SignalArguments: Sendable {
    package let values: [Value]
    package subscript(index: Int) -> Value { index < values.count ? values[index] : .other(typeName: "missing", text: nil) }
    package var count: Int { values.count }
}

/// A connected signal handler. The handler stays connected until `cancel()` or until the token is
/// released, whichever comes first; the emitting object may die first without harm.
package final class SignalConnection: Sendable {
    // @unchecked Sendable: GWeakRef is GLib's thread-safe weak reference; the pointer is allocated
    // here, never moved, and freed once in deinit after every other use.
    private struct WeakTarget: @unchecked Sendable { let ref: UnsafeMutablePointer<GWeakRef> }
    private let target: WeakTarget
    private let handlerID: Mutex<gulong>
    package let signal: String

    init(object: UnsafeMutableRawPointer, handlerID: gulong, signal: String) {
        let ref = UnsafeMutablePointer<GWeakRef>.allocate(capacity: 1)
        ref.initialize(to: GWeakRef())
        g_weak_ref_init(ref, object)
        target = WeakTarget(ref: ref)
        self.handlerID = Mutex(handlerID)
        self.signal = signal
    }

    package var isConnected: Bool { handlerID.withLock { $0 != 0 } }

    /// Disconnects the handler; idempotent. The Swift closure is released by GLib once no emission
    /// is still running it.
    package func cancel() {
        let id = handlerID.withLock { id in defer { id = 0 }; return id }
        guard id != 0, let object = g_weak_ref_get(target.ref) else { return }
        if g_signal_handler_is_connected(object, id) != 0 { g_signal_handler_disconnect(object, id) }
        g_object_unref(object)
    }

    deinit {
        cancel()
        g_weak_ref_clear(target.ref)
        target.ref.deallocate()
    }
}

/// The Swift side of a GClosure; GLib owns it through the closure and releases it in the finalizer.
private final class SignalHandlerBox {
    let handler: @Sendable (SignalArguments) -> Value?
    init(_ handler: @escaping @Sendable (SignalArguments) -> Value?) { self.handler = handler }
}

/// One marshaller for every signal: converts the GValue parameters, calls Swift, stores the result.
private let swiftSignalMarshal: GClosureMarshal = { closure, returnValue, count, params, _, _ in
    guard let closure, let data = ecv_closure_data(closure), let params else { return }
    let box = Unmanaged<SignalHandlerBox>.fromOpaque(data).takeUnretainedValue()
    let arguments = SignalArguments(values: (0..<Int(count)).map { GValueConversion.read(params + $0) })
    let result = box.handler(arguments)
    if let returnValue, returnValue.pointee.g_type != 0, let result {
        do {
            try GValueConversion.store(result, into: returnValue)
        } catch {
            BindingLog.warning("a handler returned \(result), which this signal's return value cannot hold (\(error)); "
                               + "the default value stands", about: g_value_get_object(params))
        }
    }
}

extension Object {
    /// Connects `handler`, whose result becomes the signal's return value, to `signal` ("pad-added", "notify::caps", "on-ice-candidate", …).
    ///
    /// The handler runs on the thread that emits: often a streaming thread, so it must be quick and
    /// must not block. Return a value only for signals that expect one; `nil` leaves the default,
    /// and so does a value of the wrong type, which GStreamer's debug log reports as a warning
    /// (category `ecvkit`).
    package func connectReturning(_ signal: String, after: Bool = false,
                                 _ handler: @escaping @Sendable (SignalArguments) -> Value?) throws(GStreamerError) -> SignalConnection {
        var signalID: guint = 0
        var detail: GQuark = 0
        guard g_signal_parse_name(signal, gtype, &signalID, &detail, 1) != 0 else {
            throw .unknownSignal(object: diagnosticName, signal: signal)
        }
        let box = Unmanaged.passRetained(SignalHandlerBox(handler)).toOpaque()
        let closure = g_closure_new_simple(guint(MemoryLayout<GClosure>.size), box)!
        g_closure_set_marshal(closure, swiftSignalMarshal)
        g_closure_add_finalize_notifier(closure, box) { data, _ in
            Unmanaged<SignalHandlerBox>.fromOpaque(data!).release()
        }
        let id = g_signal_connect_closure_by_id(raw, signalID, detail, closure, after ? 1 : 0)
        return SignalConnection(object: raw, handlerID: id, signal: signal)
    }

    /// Connects a handler that returns nothing (most signals).
    package func connect(_ signal: String, after: Bool = false,
                        _ handler: @escaping @Sendable (SignalArguments) -> Void) throws(GStreamerError) -> SignalConnection {
        try connectReturning(signal, after: after) { arguments in handler(arguments); return nil }
    }

    /// Emits an action signal ("create-data-channel", "get-stats", …) with typed arguments and
    /// returns its result, if the signal has one.
    @discardableResult
    package func emit(_ signal: String, _ arguments: Value...) throws(GStreamerError) -> Value? {
        try emit(signal, arguments: arguments.map { .value($0) })
    }

    /// An argument for `emit`: a Swift value, or a boxed C pointer the binding passes through (a
    /// GstPromise, a session description). The pointer is only read during the emission.
    enum SignalArgument {
        case value(Value)
        case boxed(UnsafeMutableRawPointer?)
    }

    func emit(_ signal: String, arguments: [SignalArgument]) throws(GStreamerError) -> Value? {
        try emitRaw(signal, arguments: arguments) { GValueConversion.read($0) }
    }

    /// Emits `signal` and hands the return GValue (if the signal has one) to `readResult` before
    /// it is unset. Every GValue made here is unset on every path.
    func emitRaw<R>(_ signal: String, arguments: [SignalArgument],
                    _ readResult: (UnsafeMutablePointer<GValue>) -> R) throws(GStreamerError) -> R? {
        var signalID: guint = 0
        var detail: GQuark = 0
        guard g_signal_parse_name(signal, gtype, &signalID, &detail, 0) != 0 else {
            throw .unknownSignal(object: diagnosticName, signal: signal)
        }
        var query = GSignalQuery()
        g_signal_query(signalID, &query)
        guard Int(query.n_params) == arguments.count else {
            throw .signalArguments(signal: signal, message: "takes \(query.n_params) arguments, got \(arguments.count)")
        }
        let staticScope = ecv_signal_type_static_scope()
        let values = UnsafeMutablePointer<GValue>.allocate(capacity: arguments.count + 1)
        values.initialize(repeating: GValue(), count: arguments.count + 1)
        var initialised = 0
        defer {
            for index in 0..<initialised { g_value_unset(values + index) }
            values.deallocate()
        }
        g_value_init(values, gtype)
        g_value_set_object(values, raw)
        initialised = 1
        for (index, argument) in arguments.enumerated() {
            let slot = values + index + 1
            g_value_init(slot, query.param_types[index] & ~staticScope)
            initialised += 1
            switch argument {
            case .value(let value):
                do {
                    try GValueConversion.store(value, into: slot)
                } catch {
                    throw .signalArguments(signal: signal, message: "argument \(index + 1): \(error)")
                }
            case .boxed(let pointer):
                g_value_set_boxed(slot, pointer)
            }
        }
        let returnType = query.return_type & ~staticScope
        guard returnType != ecv_type_none() else {
            g_signal_emitv(values, signalID, detail, nil)
            return nil
        }
        return withGValue(of: returnType) { result in
            g_signal_emitv(values, signalID, detail, result)
            return readResult(result)
        }
    }
}
