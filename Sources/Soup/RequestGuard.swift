internal import CSoup
internal import GLibCore

/// What an `HTTPServer` accepts from a client before any handler runs.
public struct HTTPServerLimits: Sendable, Equatable {
    /// Largest request body. A larger declared `Content-Length` is answered `413` and the body is
    /// discarded unread into memory; a chunked body that grows past it likewise.
    public var maxBodyBytes: Int
    /// Largest request target (path and query): `414`.
    public var maxURLBytes: Int
    /// Largest header block (names and values together): `431`.
    public var maxHeaderBytes: Int
    /// From the moment a connection is ready for a request (accepted, or its previous answer
    /// sent) until the request's headers are complete. Covers idle keep-alive connections and
    /// slow-header senders alike: the connection is shut down when it runs out.
    public var headerTimeout: Duration
    /// From the headers until the whole body arrived; the connection is shut down when it runs out.
    public var bodyTimeout: Duration

    public init(maxBodyBytes: Int = 1 << 20, maxURLBytes: Int = 8 << 10, maxHeaderBytes: Int = 32 << 10,
                headerTimeout: Duration = .seconds(15), bodyTimeout: Duration = .seconds(30)) {
        self.maxBodyBytes = maxBodyBytes
        self.maxURLBytes = maxURLBytes
        self.maxHeaderBytes = maxHeaderBytes
        self.headerTimeout = headerTimeout
        self.bodyTimeout = bodyTimeout
    }
}

/// Watches one server-side request from `request-started` to its end: arms the header and body
/// deadlines, checks the request line, headers and `Content-Length` when the headers arrive, and
/// counts body bytes. A refused request gets its status here, so libsoup skips the handlers and
/// answers at once with `Connection: close`; a connection past a deadline is shut down (libsoup
/// then sees the stream end and releases the connection and its descriptor).
@MainLoopActor
final class RequestGuard {
    private let message: OwnedGObject
    /// The connection's socket, which a deadline shuts down.
    private let socket: OwnedGObject?
    private let limits: HTTPServerLimits
    private let handlers: SignalHandlerSet
    /// The server's one timer for every connection's deadline.
    private let deadlines: ConnectionDeadlines
    private var deadline: ConnectionDeadlines.Token?
    private var bodyBytes = 0
    private var refused = false
    private let onDone: () -> Void

    init(message: OwnedGObject, socket: OwnedGObject?, limits: HTTPServerLimits, deadlines: ConnectionDeadlines,
         onDone: @escaping () -> Void) {
        self.message = message
        self.socket = socket
        self.limits = limits
        self.deadlines = deadlines
        self.onDone = onDone
        handlers = SignalHandlerSet(on: message)
        let plain: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?) -> Void = { _, data in
            let watcher = context(data, as: RequestGuard.self)
            MainLoopActor.assumeIsolated { watcher?.gotHeaders() }
        }
        let chunk: @convention(c) (OpaquePointer?, OpaquePointer?, UnsafeMutableRawPointer?) -> Void = { _, bytes, data in
            let watcher = context(data, as: RequestGuard.self), size = bytes.map { Int(g_bytes_get_size($0)) } ?? 0
            MainLoopActor.assumeIsolated { watcher?.gotChunk(size: size) }
        }
        let body: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?) -> Void = { _, data in
            let watcher = context(data, as: RequestGuard.self)
            MainLoopActor.assumeIsolated { watcher?.gotBody() }
        }
        let finished: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?) -> Void = { _, data in
            let watcher = context(data, as: RequestGuard.self)
            MainLoopActor.assumeIsolated { watcher?.finish() }
        }
        handlers.connect("got-headers", unsafeBitCast(plain, to: GCallback.self), context: self)
        handlers.connect("got-chunk", unsafeBitCast(chunk, to: GCallback.self), context: self)
        handlers.connect("got-body", unsafeBitCast(body, to: GCallback.self), context: self)
        handlers.connect("finished", unsafeBitCast(finished, to: GCallback.self), context: self)
        handlers.connect("disconnected", unsafeBitCast(finished, to: GCallback.self), context: self)
        arm(limits.headerTimeout)
    }

    private var opaque: OpaquePointer { message.opaque }

    private func arm(_ delay: Duration) {
        disarm()
        deadline = deadlines.schedule(after: delay) { [weak self] in self?.expired() }
    }

    private func disarm() {
        if let deadline { deadlines.cancel(deadline) }
        deadline = nil
    }

    private func gotHeaders() {
        disarm()
        if let (status, reason) = problem() {
            refuse(status, reason)
        }
        arm(limits.bodyTimeout)
    }

    /// The first check the request fails: status and reason.
    private func problem() -> (Int, String)? {
        if let uri = soup_server_message_get_uri(opaque) {
            let path = g_uri_get_path(uri).map { strlen($0) } ?? 0
            let query = g_uri_get_query(uri).map { strlen($0) } ?? 0
            if path + query > limits.maxURLBytes { return (414, "the request target is longer than \(limits.maxURLBytes) bytes") }
        }
        let headers = readHeaders(soup_server_message_get_request_headers(opaque))
        let headerBytes = headers.fields.reduce(0) { $0 + $1.name.utf8.count + $1.value.utf8.count + 4 }
        if headerBytes > limits.maxHeaderBytes { return (431, "the request headers exceed \(limits.maxHeaderBytes) bytes") }
        let lengths = headers.values(for: "Content-Length")
        if !lengths.isEmpty {
            // RFC 9110 §8.6: one non-negative decimal; repeated equal values are tolerated.
            let trimmed = Set(lengths.flatMap { $0.split(separator: ",") }.map { $0.trimmingCharacters(in: .whitespaces) })
            guard trimmed.count == 1, let text = trimmed.first, !text.isEmpty, text.utf8.allSatisfy({ (48...57).contains($0) }),
                  text.utf8.count <= 18, let length = Int(text) else {
                return (400, "invalid Content-Length")
            }
            if length > limits.maxBodyBytes { return (413, "the body is larger than \(limits.maxBodyBytes) bytes") }
            if headers.contains("Transfer-Encoding") { return (400, "both Content-Length and Transfer-Encoding") }
        }
        return nil
    }

    private func gotChunk(size: Int) {
        bodyBytes += size
        if bodyBytes > limits.maxBodyBytes, !refused { refuse(413, "the body is larger than \(limits.maxBodyBytes) bytes") }
    }

    private func gotBody() {
        disarm()
    }

    /// Sets the answer now: libsoup runs no handler for a message that has a status, stops
    /// keeping the body, and closes the connection after answering.
    private func refuse(_ status: Int, _ reason: String) {
        refused = true
        if let body = soup_server_message_get_request_body(opaque) {
            soup_message_body_set_accumulate(body, 0)
            soup_message_body_truncate(body)
        }
        soup_server_message_set_status(opaque, guint(status), nil)
        let headers = soup_server_message_get_response_headers(opaque)
        soup_message_headers_replace(headers, "Connection", "close")
        soup_message_headers_replace(headers, "Content-Type", "application/json")
        let json = "{\"code\":\"\(status == 400 ? "BAD_REQUEST" : "REQUEST_REFUSED")\",\"message\":\"\(reason)\"}"
        if let response = soup_server_message_get_response_body(opaque) {
            soup_message_body_truncate(response)
            soup_message_body_append(response, SOUP_MEMORY_COPY, json, gsize(json.utf8.count))
        }
        // A declared body that is not coming (a short or invalid length) must not hold the answer.
        if status == 400 || status == 413 { arm(limits.bodyTimeout) }
    }

    /// A deadline passed: shut the socket down; libsoup notices and releases the connection.
    private func expired() {
        deadline = nil
        // A status first: libsoup may take the cut-off stream's end for the end of the headers,
        // and a message with a status reaches no handler.
        if soup_server_message_get_status(opaque) == 0 { soup_server_message_set_status(opaque, 408, nil) }
        if let socket {
            g_socket_shutdown(socket.typed(GSocket.self), 1, 1, nil)
        }
        finish()
    }

    func finish() {
        disarm()
        handlers.disconnectAll()
        onDone()
    }
}
