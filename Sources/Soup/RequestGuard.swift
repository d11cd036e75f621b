internal import CSoup
internal import GLibCore
import Dispatch
import Glibc

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
    /// Plain HTTP: connections one client address may have waiting for their request headers at
    /// once; one more is closed when accepted, unanswered (so no one client holds the descriptors).
    public var maxWaitingConnectionsPerAddress: Int

    public init(maxBodyBytes: Int = 1 << 20, maxURLBytes: Int = 8 << 10, maxHeaderBytes: Int = 32 << 10,
                headerTimeout: Duration = .seconds(15), bodyTimeout: Duration = .seconds(30),
                maxWaitingConnectionsPerAddress: Int = .max) {
        self.maxBodyBytes = maxBodyBytes
        self.maxURLBytes = maxURLBytes
        self.maxHeaderBytes = maxHeaderBytes
        self.headerTimeout = headerTimeout
        self.bodyTimeout = bodyTimeout
        self.maxWaitingConnectionsPerAddress = maxWaitingConnectionsPerAddress
    }
}

/// Watches one server-side request from `request-started` to its end: arms the header and body
/// deadlines, checks the request line, headers and `Content-Length` when the headers arrive, and
/// counts body bytes. A refused request is answered here at once, unread body and all, and no
/// handler sees it; a connection past a deadline is shut down (libsoup
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
            return
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
        if let problem = RequestHead.bodyProblem(contentLengths: headers.values(for: "Content-Length"),
                                                 hasTransferEncoding: headers.contains("Transfer-Encoding"), maxBodyBytes: limits.maxBodyBytes) {
            return problem
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

    /// Answers now and closes, without reading the rest of the body. A status set here would
    /// keep libsoup reading the declared (or chunked) body to its end before answering (a 100 MB
    /// declared body, a `Content-Length: -1` read as "until the peer closes", a chunked body that
    /// never ends), so the guard takes the connection from libsoup (no handler runs for it),
    /// writes the answer itself, ends its sending side and drops what the client still sends
    /// until the body deadline, so the client reads the answer rather than a reset.
    private func refuse(_ status: Int, _ reason: String) {
        refused = true
        disarm()
        let json = "{\"code\":\"\(status == 400 ? "BAD_REQUEST" : "REQUEST_REFUSED")\",\"message\":\"\(reason)\"}"
        let phrase = soup_status_get_phrase(guint(status)).map { String(cString: $0) } ?? "Error"
        let answer = Array(("HTTP/1.1 \(status) \(phrase)\r\nConnection: close\r\nContent-Type: application/json\r\n"
            + "Content-Length: \(json.utf8.count)\r\n\r\n" + json).utf8)
        let socket = self.socket ?? soup_server_message_get_socket(opaque).map { OwnedGObject(retaining: UnsafeMutableRawPointer($0)) }
        guard let stolen = soup_server_message_steal_connection(opaque) else { return }
        let stream = OwnedGObject(adopting: UnsafeMutableRawPointer(stolen))
        // A small answer into a connection that has sent nothing yet: the send buffer has room,
        // and a client that is not reading cannot stall the main loop (the write never blocks).
        if let output = g_io_stream_get_output_stream(stream.typed(GIOStream.self)) {
            _ = answer.withUnsafeBytes { bytes in
                g_pollable_stream_write(output, bytes.baseAddress, gsize(bytes.count), 0, nil, nil)
            }
        }
        if let socket {
            g_socket_shutdown(socket.typed(GSocket.self), 0, 1, nil)
            // The stream (and so the descriptor) is released only after the last read.
            let drain = InputDrain(descriptor: g_socket_get_fd(socket.typed(GSocket.self)), keeping: stream)
            _ = deadlines.schedule(after: limits.bodyTimeout) { drain.cancel() }
        }
        finish()
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
