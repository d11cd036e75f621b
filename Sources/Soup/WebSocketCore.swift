internal import CSoup
internal import CSoupShims
internal import GLibCore
import Glibc
import Synchronization

/// The main-loop side of a WebSocket: owns the `SoupWebsocketConnection` and its signal handlers,
/// feeds `events`, and mirrors the state so senders on other threads can fail fast.
///
/// The handlers keep this object alive (GLib retains their context) until "closed" arrives, so
/// a connection that is closing still delivers its last events after the public wrapper is gone.
/// Isolated to the main loop but for the members senders use from any thread: `state` (a Mutex),
/// the URL, and the calls that queue their work onto the loop.
@MainLoopActor
final class WebSocketCore {
    let connection: OwnedGObject
    nonisolated let url: String
    private let handlers: SignalHandlerSet
    private let continuation: AsyncStream<WebSocketEvent>.Continuation
    private nonisolated let state = Mutex(WebSocketState.open)
    /// Texts `send` accepted that never went out: the connection began closing first (at most
    /// `maxUnsent` and `maxUnsentBytes`, the oldest kept). A sender that reconnects can send them again.
    private nonisolated let unsent = Mutex<(texts: [String], bytes: Int)>(([], 0))
    nonisolated static let maxUnsent = 256
    nonisolated static let maxUnsentBytes = 1 << 20
    /// libsoup's outgoing queue, bounded in bytes (nil: not bounded, or no TCP socket to measure).
    private var backlog: OutgoingBacklog?
    /// Messages received and not read yet, bounded by `maxUnreadIncoming` (nil: not bounded).
    private let unread = UnreadBytes()
    private var maxUnreadIncoming: Int?
    private var unreadOverflowed = false
    /// Client frames are masked: 4 bytes more on the wire.
    private let masked: Bool
    private var closedReported = false
    /// Called on the main loop once the connection closed (a server stops tracking it).
    var onClosed: (() -> Void)?

    private var socket: OpaquePointer { connection.opaque }

    /// Wraps `connection` (retained) and returns the public object.
    /// - Parameters:
    ///   - maxOutgoingBytes: the most bytes the connection may hold that the peer has not taken; a
    ///     send past it closes the connection with 1008 (nil: no bound).
    ///   - maxUnreadIncomingBytes: the most bytes of received messages not yet read from `events`;
    ///     a message past it drops the connection (nil: no bound).
    static func wrap(_ connection: UnsafeMutableRawPointer, url: String, side: WebSocketConnection.Side,
                     maxIncomingPayloadSize: Int, maxOutgoingBytes: Int?, maxUnreadIncomingBytes: Int? = nil,
                     keepaliveInterval: Duration?, onClosed: (() -> Void)? = nil) -> WebSocketConnection {
        let (events, continuation) = AsyncStream<WebSocketEvent>.makeStream(bufferingPolicy: .unbounded)
        let core = WebSocketCore(connection: OwnedGObject(retaining: connection), url: url, masked: side == .client,
                                 continuation: continuation)
        core.onClosed = onClosed
        core.maxUnreadIncoming = maxUnreadIncomingBytes
        if let maxOutgoingBytes, let socket = core.underlyingSocket {
            core.backlog = OutgoingBacklog(descriptor: g_socket_get_fd(socket), limit: maxOutgoingBytes)
        }
        soup_websocket_connection_set_max_incoming_payload_size(core.socket, guint64(max(0, maxIncomingPayloadSize)))
        // libsoup checks that size on the compressed frame; the server's deflate checks it while inflating.
        var negotiated = soup_websocket_connection_get_extensions(core.socket)
        while let node = negotiated {
            if let object = node.pointee.data { ecv_bounded_deflate_set_max(object.assumingMemoryBound(to: SoupWebsocketExtension.self), gsize(max(0, maxIncomingPayloadSize))) }
            negotiated = node.pointee.next
        }
        if let keepaliveInterval { core.applyKeepalive(keepaliveInterval) }
        let subprotocol = soup_websocket_connection_get_protocol(core.socket).map { String(cString: $0) }
        if soup_websocket_connection_get_state(core.socket) != SOUP_WEBSOCKET_STATE_OPEN { core.connectionClosed() }
        return WebSocketConnection(core: core, events: WebSocketEvents(stream: events, unread: core.unread), url: url, side: side,
                                   subprotocol: subprotocol)
    }

    private init(connection: OwnedGObject, url: String, masked: Bool, continuation: AsyncStream<WebSocketEvent>.Continuation) {
        self.connection = connection
        self.url = url
        self.masked = masked
        self.continuation = continuation
        handlers = SignalHandlerSet(on: connection)

        let message: @convention(c) (OpaquePointer?, gint, OpaquePointer?, UnsafeMutableRawPointer?) -> Void = { _, type, bytes, data in
            guard let core = context(data, as: WebSocketCore.self), let bytes else { return }
            let payload = copyBytes(bytes)
            let event: WebSocketEvent = type == gint(SOUP_WEBSOCKET_DATA_TEXT.rawValue)
                ? .text(String(decoding: payload, as: UTF8.self)) : .binary(payload)
            MainLoopActor.assumeIsolated { core.received(event) }
        }
        let error: @convention(c) (OpaquePointer?, UnsafeMutablePointer<GError>?, UnsafeMutableRawPointer?) -> Void = { _, error, data in
            guard let core = context(data, as: WebSocketCore.self), let error else { return }
            let message = GLibError(borrowing: error).message
            let tooBig = error.pointee.domain == soup_websocket_error_quark() && error.pointee.code == gint(SOUP_WEBSOCKET_CLOSE_TOO_BIG.rawValue)
            MainLoopActor.assumeIsolated {
                if tooBig { core.closeTooBig() }
                core.received(.error(message))
            }
        }
        let closing: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?) -> Void = { _, data in
            let core = context(data, as: WebSocketCore.self)
            MainLoopActor.assumeIsolated { core?.closingStarted() }
        }
        let closed: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?) -> Void = { _, data in
            let core = context(data, as: WebSocketCore.self)
            MainLoopActor.assumeIsolated { core?.connectionClosed() }
        }
        handlers.connect("message", unsafeBitCast(message, to: GCallback.self), context: self)
        handlers.connect("error", unsafeBitCast(error, to: GCallback.self), context: self)
        handlers.connect("closing", unsafeBitCast(closing, to: GCallback.self), context: self)
        handlers.connect("closed", unsafeBitCast(closed, to: GCallback.self), context: self)
    }

    nonisolated var currentState: WebSocketState { state.withLock { $0 } }
    /// On the loop, after the sends queued before it ran (`MainLoopActor.perform` keeps order).
    func unsentTexts() -> [String] { unsent.withLock { $0.texts } }

    // MARK: Any thread

    /// Accepts the payload only while the connection is open, and hands it to the loop under the
    /// same lock `close` holds while it leaves `.open` and hands its close over: a send accepted
    /// before a close (from any thread) reaches the loop first, so it is written ahead of the
    /// close frame. Were the check and the hand-over apart, a close on another thread could slip
    /// between them: the send would be accepted yet find the connection closing, a text nobody
    /// but `unsentTexts()` knows of — lost for a sender that trusts an accepted send.
    nonisolated func send(binary: Bool, _ payload: [UInt8]) throws(WebSocketError) {
        try state.withLock { (current: inout WebSocketState) throws(WebSocketError) in
            guard current == .open else { throw .notOpen(url: url, state: current) }
            MainLoopActor.perform { [self] in
                // Only the peer can have closed since the check above (a local close queues behind
                // this): the stream reports that, and a text is kept for a sender that reconnects.
                guard soup_websocket_connection_get_state(socket) == SOUP_WEBSOCKET_STATE_OPEN else {
                    if !binary { keepUnsent(payload) }
                    return
                }
                if backlog?.admit(OutgoingBacklog.frameBytes(payload: payload.count, masked: masked)) == false {
                    if !binary { keepUnsent(payload) }
                    return backlogExceeded()
                }
                let bytes = makeGBytes(payload)
                soup_websocket_connection_send_message(socket, binary ? SOUP_WEBSOCKET_DATA_BINARY : SOUP_WEBSOCKET_DATA_TEXT, bytes)
                g_bytes_unref(bytes)
            }
        }
    }

    /// Leaves `.open` and queues the close under the state's lock, behind every send accepted
    /// before (see `send`).
    nonisolated func close(code: UInt16, reason: String) {
        state.withLock { state in
            guard state == .open else { return }
            state = .closing
            MainLoopActor.perform { [self] in
                guard soup_websocket_connection_get_state(socket) == SOUP_WEBSOCKET_STATE_OPEN else { return }
                soup_websocket_connection_close(socket, gushort(code), reason.isEmpty ? nil : reason)
            }
        }
    }

    nonisolated func setKeepaliveInterval(_ interval: Duration) {
        MainLoopActor.perform { [self] in applyKeepalive(interval) }
    }

    /// The public wrapper went away: nobody can send or close any more, so close politely.
    nonisolated func ownerReleased() {
        close(code: 1001, reason: "")
    }

    // MARK: Main loop

    private func keepUnsent(_ payload: [UInt8]) {
        unsent.withLock { unsent in
            guard unsent.texts.count < Self.maxUnsent, unsent.bytes + payload.count <= Self.maxUnsentBytes else { return }
            unsent.texts.append(String(decoding: payload, as: UTF8.self))
            unsent.bytes += payload.count
        }
    }

    /// The peer does not read what it is sent: the close frame (1008, policy violation) is
    /// queued and the connection dropped at once, as a peer that reads nothing would never take the
    /// frame (libsoup would keep the queue for its 5 s close timeout). Announced on `events` as an
    /// `.error` before its `.closed`. Runs only while libsoup's connection is open (the send
    /// checked), so it happens once.
    private func backlogExceeded() {
        guard let backlog else { return }
        state.withLock { if $0 == .open { $0 = .closing } }
        continuation.yield(.error("outgoing backlog: the peer left more than \(backlog.limit) bytes unread; closing with 1008"))
        soup_websocket_connection_close(socket, 1008, "the peer does not read")
        abort()
    }

    /// An incoming message passed `maxIncomingPayloadSize`. libsoup (3.2) then closes the stream
    /// at once, sending no close frame, and the peer, whose frame is still arriving, meets a reset
    /// (1006). Called from libsoup's "error" signal, before it closes the stream: on a plain
    /// server connection with nothing of ours unwritten (a close frame must not land inside a
    /// frame), the close frame `1009` is written here on a duplicate of the descriptor, the
    /// sending side ended, and what the peer still sends drained for up to 2 s, so it reads 1009.
    /// Over TLS the bytes cannot be written past libsoup: the peer still sees 1006 there.
    func closeTooBig() {
        guard !masked, backlog?.queued == 0, let socket = underlyingSocket, !Soup.isTLS(soup_websocket_connection_get_io_stream(self.socket)),
              let duplicate = DuplicatedDescriptor(of: g_socket_get_fd(socket)) else { return }
        let frame: [UInt8] = [0x88, 0x02, 0x03, 0xF1] // FIN + close, 2 bytes: 1009 (message too big)
        _ = frame.withUnsafeBytes { Glibc.send(duplicate.descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
        shutdown(duplicate.descriptor, Int32(SHUT_WR))
        InputDrain(descriptor: duplicate.descriptor, keeping: duplicate).cancel(after: .seconds(2))
    }

    /// The connection's `GSocket`, under TLS or not (nil once libsoup let go of it).
    private var underlyingSocket: UnsafeMutablePointer<GSocket>? {
        Soup.underlyingSocket(of: soup_websocket_connection_get_io_stream(socket).map { UnsafeMutableRawPointer($0) })
    }

    var keepaliveInterval: Duration {
        .seconds(Int(soup_websocket_connection_get_keepalive_interval(socket)))
    }

    private func applyKeepalive(_ interval: Duration) {
        soup_websocket_connection_set_keepalive_interval(socket, guint(interval.secondsRoundedUp))
    }

    private func received(_ event: WebSocketEvent) {
        guard unread.receive(event.payloadBytes, limit: maxUnreadIncoming) else { return unreadExceeded() }
        continuation.yield(event)
    }

    /// The peer sends faster than its messages are read: the message is not delivered, `events`
    /// says why before its `.closed`, and the connection's stream is closed at once. Not a
    /// shutdown, as `abort` does: a socket shut down for reading still takes what a sender keeps
    /// writing, and libsoup would go on reading it for as long as the sender writes.
    private func unreadExceeded() {
        guard !closedReported, !unreadOverflowed, let limit = maxUnreadIncoming else { return }
        unreadOverflowed = true
        state.withLock { if $0 == .open { $0 = .closing } }
        continuation.yield(.error("incoming backlog: the peer sent more than \(limit) bytes not read yet; dropping the connection"))
        if let stream = soup_websocket_connection_get_io_stream(socket) { g_io_stream_close(stream, nil, nil) }
    }

    private func closingStarted() {
        state.withLock { if $0 == .open { $0 = .closing } }
    }

    /// Drops the TCP connection without a closing handshake (server shutdown). The peer sees the
    /// stream end (1006); locally libsoup reads EOF and emits "closed".
    func abort() {
        guard !closedReported else { return }
        closingStarted()
        if let underlying = underlyingSocket {
            g_socket_shutdown(underlying, 1, 1, nil)
        } else {
            connectionClosed() // no socket to shut down: report it closed ourselves
        }
    }

    private func connectionClosed() {
        guard !closedReported else { return }
        closedReported = true
        state.withLock { $0 = .closed }
        let code = soup_websocket_connection_get_close_code(socket)
        let reason = soup_websocket_connection_get_close_data(socket).map { String(cString: $0) } ?? ""
        continuation.yield(.closed(code: code == 0 ? 1006 : UInt16(code), reason: reason))
        continuation.finish()
        let notify = onClosed
        onClosed = nil
        handlers.disconnectAll() // GLib releases the contexts that kept this object alive
        notify?()
    }
}

/// The `GSocket` under a WebSocket's stream: a `GSocketConnection` directly, or through a TLS
/// connection's "base-io-stream" (GIO) or libsoup's own wrapper's "base-iostream".
private func underlyingSocket(of stream: UnsafeMutableRawPointer?) -> UnsafeMutablePointer<GSocket>? {
    streamLayers(of: stream).lazy.compactMap { object -> UnsafeMutablePointer<GSocket>? in
        let instance = object.assumingMemoryBound(to: GTypeInstance.self)
        guard g_type_check_instance_is_a(instance, g_socket_connection_get_type()) != 0 else { return nil }
        return g_socket_connection_get_socket(object.assumingMemoryBound(to: GSocketConnection.self))
    }.first
}

/// Whether a WebSocket's stream runs over TLS (a `GTlsConnection` among its layers).
private func isTLS(_ stream: UnsafeMutablePointer<GIOStream>?) -> Bool {
    streamLayers(of: stream.map { UnsafeMutableRawPointer($0) }).contains {
        g_type_check_instance_is_a($0.assumingMemoryBound(to: GTypeInstance.self), g_tls_connection_get_type()) != 0
    }
}

/// A stream and the streams under it, outermost first, down to the `GSocketConnection` (four at most).
private func streamLayers(of stream: UnsafeMutableRawPointer?) -> [UnsafeMutableRawPointer] {
    var layers: [UnsafeMutableRawPointer] = []
    var current = stream
    for _ in 0..<4 {
        guard let object = current else { break }
        layers.append(object)
        let instance = object.assumingMemoryBound(to: GTypeInstance.self)
        if g_type_check_instance_is_a(instance, g_socket_connection_get_type()) != 0 { break }
        let gobject = object.assumingMemoryBound(to: GObject.self)
        let cls = instance.pointee.g_class.map { UnsafeMutableRawPointer($0).assumingMemoryBound(to: GObjectClass.self) }
        guard let cls else { break }
        let candidates: [String] = ["base-io-stream", "base-iostream"]
        guard let property = candidates.first(where: { g_object_class_find_property(cls, $0) != nil }) else { break }
        var value = GValue()
        g_value_init(&value, g_io_stream_get_type())
        g_object_get_property(gobject, property, &value)
        current = g_value_get_object(&value) // still referenced by its owner after unset
        g_value_unset(&value)
    }
    return layers
}
