internal import CGLibShims
internal import CGStreamer
internal import CGStreamerShims
import GLibCore

/// Bridges a one-shot `GstPromise` to `async`.
///
/// The promise's change callback resolves a `OneShot`; its destroy-notify resolves it with an
/// error if the element dropped the promise without answering, so an awaiting task never hangs
/// and the callback box is never leaked.
enum PromiseBridge {
    /// Creates a promise, hands it to `start` (which passes it to an action signal), and waits for
    /// the reply. `extract` reads the reply structure while it is still alive.
    static func await<T: Sendable>(
        _ operation: String,
        extract: @escaping @Sendable (UnsafePointer<GstStructure>?) -> Result<T, GStreamerError>,
        start: (UnsafeMutablePointer<GstPromise>) throws(GStreamerError) -> Void
    ) async throws(GStreamerError) -> T {
        let outcome = OneShot<T, GStreamerError>()
        let box = PromiseCallbacks(
            onChange: { promise in
                outcome.resolve(reply(of: promise, operation: operation, extract: extract))
            },
            onDestroy: {
                outcome.resolve(.failure(.promiseFailed(operation: operation, reason: "dropped without an answer")))
            })
        let promise = gst_promise_new_with_change_func({ promise, data in
            guard let promise, let data else { return }
            Unmanaged<PromiseCallbacks>.fromOpaque(data).takeUnretainedValue().onChange(promise)
        }, Unmanaged.passRetained(box).toOpaque(), { data in
            guard let data else { return }
            Unmanaged<PromiseCallbacks>.fromOpaque(data).takeRetainedValue().onDestroy()
        })!
        do {
            try start(promise)
        } catch {
            gst_promise_unref(promise)
            throw error
        }
        gst_promise_unref(promise)
        return try await outcome.value()
    }

    private static func reply<T>(of promise: UnsafeMutablePointer<GstPromise>, operation: String,
                                 extract: (UnsafePointer<GstStructure>?) -> Result<T, GStreamerError>) -> Result<T, GStreamerError> {
        switch gst_promise_wait(promise) {
        case GST_PROMISE_RESULT_REPLIED:
            let reply = gst_promise_get_reply(promise)
            if let reply, let message = errorMessage(in: reply) {
                return .failure(.promiseFailed(operation: operation, reason: message))
            }
            return extract(reply)
        case GST_PROMISE_RESULT_INTERRUPTED:
            return .failure(.promiseFailed(operation: operation, reason: "interrupted"))
        case GST_PROMISE_RESULT_EXPIRED:
            return .failure(.promiseFailed(operation: operation, reason: "expired"))
        default:
            return .failure(.promiseFailed(operation: operation, reason: "no result"))
        }
    }

    /// webrtcbin answers failures with a reply holding a GError in its "error" field.
    private static func errorMessage(in reply: UnsafePointer<GstStructure>) -> String? {
        guard let value = gst_structure_get_value(reply, "error"),
              value.pointee.g_type == g_error_get_type(),
              let error = g_value_get_boxed(value)?.assumingMemoryBound(to: GError.self) else { return nil }
        return error.pointee.message.map { String(cString: $0) } ?? "unknown error"
    }
}

private final class PromiseCallbacks {
    let onChange: (UnsafeMutablePointer<GstPromise>) -> Void
    let onDestroy: () -> Void
    init(onChange: @escaping (UnsafeMutablePointer<GstPromise>) -> Void, onDestroy: @escaping () -> Void) {
        self.onChange = onChange
        self.onDestroy = onDestroy
    }
}

extension Object {
    /// Emits an action signal whose last argument is a GstPromise and waits for the reply,
    /// converted to a Swift `Structure` (nil for an empty reply).
    package func emitAwaitingReply(_ signal: String, _ arguments: Value...) async throws(GStreamerError) -> Structure? {
        try await PromiseBridge.await(signal, extract: { .success($0.map { Structure(reading: $0) }) }) { promise throws(GStreamerError) in
            _ = try emit(signal, arguments: arguments.map { .value($0) } + [.boxed(UnsafeMutableRawPointer(promise))])
        }
    }
}
