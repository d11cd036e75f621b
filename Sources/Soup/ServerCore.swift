internal import CSoup
internal import CSoupShims
import Foundation
internal import GLibCore
import Synchronization

/// The main-loop side of `HTTPServer`: the `SoupServer`, its handlers, paused requests and
/// accepted WebSockets.
///
/// The SoupServer's handlers retain this object (through their user data) until `stop` removes
/// them, so callbacks never outlive it; `stop` is the one place everything is released.
/// Isolated to the main loop but for what `HTTPServer` reads and writes from any thread: the
/// route tables and the bound address, each behind a Mutex.
@MainLoopActor
final class ServerCore {
    nonisolated let tls: TLSIdentity?
    let limits: HTTPServerLimits
    private let maxIncomingWebSocketPayloadSize: Int
    private let maxOutgoingWebSocketBytes: Int?
    private let maxUnreadIncomingWebSocketBytes: Int?
    private nonisolated let routes = Mutex<[ServerRoute]>([])
    private nonisolated let webSocketRoutes = Mutex<[WebSocketRoute]>([])
    private nonisolated let bound = Mutex<(host: String, port: UInt16?)>(("127.0.0.1", nil))

    private var server: OwnedGObject?
    private var serverSignals: SignalHandlerSet?
    private var registeredPaths: Set<String> = []
    private var paused: [UnsafeMutableRawPointer: PausedRequest] = [:]
    private var webSockets: [ObjectIdentifier: WebSocketCore] = [:]
    /// Requests between `request-started` and their end, each with its deadlines.
    private var guards: [UnsafeMutableRawPointer: RequestGuard] = [:]
    /// One timer for all of their deadlines.
    private let deadlines = ConnectionDeadlines()
    /// Plain HTTP: the listening socket, served by the front door until request headers are
    /// complete. (TLS connections go to libsoup's own listener: their bytes cannot be peeked at.)
    private var listener: OwnedGObject?
    private var frontDoor: FrontDoor?
    /// The socket of the connection being handed to libsoup right now: its `request-started`
    /// fires inside `soup_server_accept_iostream`, and such a message has no socket of its own.
    private var handingOff: UnsafeMutablePointer<GSocket>?
    private var stopped = false

    /// A request whose async handler is still running; holds a reference to the message.
    private struct PausedRequest {
        let message: OwnedGObject
        let task: Task<Void, Never>
    }

    nonisolated init(tls: TLSIdentity?, limits: HTTPServerLimits, maxIncomingWebSocketPayloadSize: Int, maxOutgoingWebSocketBytes: Int?,
                     maxUnreadIncomingWebSocketBytes: Int?) {
        self.tls = tls
        self.limits = limits
        self.maxIncomingWebSocketPayloadSize = maxIncomingWebSocketPayloadSize
        self.maxOutgoingWebSocketBytes = maxOutgoingWebSocketBytes
        self.maxUnreadIncomingWebSocketBytes = maxUnreadIncomingWebSocketBytes
    }

    nonisolated var boundPort: UInt16? { bound.withLock { $0.port } }
    nonisolated var boundHost: String { bound.withLock { $0.host } }

    private var soupServer: UnsafeMutablePointer<SoupServer>? { server?.typed(SoupServer.self) }

    // MARK: Routes (any thread)

    nonisolated func addRoute(_ route: ServerRoute) {
        routes.withLock { routes in
            routes.removeAll { $0.prefix == route.prefix && $0.method == route.method }
            routes.append(route)
        }
    }

    nonisolated func addWebSocketRoute(_ route: WebSocketRoute) {
        webSocketRoutes.withLock { routes in
            routes.removeAll { $0.path == route.path }
            routes.append(route)
        }
        MainLoopActor.perform { [self] in if server != nil { registerWebSocket(route) } }
    }

    // MARK: Lifecycle (main loop)

    func listen(host: String, port: UInt16) -> Result<UInt16, HTTPServerError> {
        if stopped { return .failure(.stopped) }
        if server != nil, let port = boundPort { return .failure(.alreadyListening(port: port)) }
        guard let address = g_inet_socket_address_new_from_string(host, guint(port)) else {
            return .failure(.invalidAddress(host))
        }
        defer { g_object_unref(address) }
        let server = OwnedGObject(adopting: g_object_new_with_properties(soup_server_get_type(), 0, nil, nil))
        self.server = server
        let soup = server.typed(SoupServer.self)
        if let tls { soup_server_set_tls_certificate(soup, tls.certificate.typed(GTlsCertificate.self)) }
        // libsoup's permessage-deflate inflates a frame whole, bounded only by its compressed size.
        ecv_soup_server_use_bounded_deflate(soup)
        soup_server_add_handler(soup, nil, { _, message, path, _, data in
            guard let message else { return }
            let path = path.map { String(cString: $0) } ?? "/"
            onMainLoop(context(data, as: ServerCore.self), message) { $0.handle($1, path: path) }
        }, retainAsyncContext(self), { data in _ = releaseAsyncContext(data, as: ServerCore.self) })
        registeredPaths.insert("/")
        for route in webSocketRoutes.withLock({ $0 }) { registerWebSocket(route) }
        let signals = SignalHandlerSet(on: server)
        let aborted: @convention(c) (UnsafeMutableRawPointer?, OpaquePointer?, UnsafeMutableRawPointer?) -> Void = { _, message, data in
            guard let message else { return }
            onMainLoop(context(data, as: ServerCore.self), message) { $0.requestAborted(UnsafeMutableRawPointer($1)) }
        }
        signals.connect("request-aborted", unsafeBitCast(aborted, to: GCallback.self), context: self)
        let started: @convention(c) (UnsafeMutableRawPointer?, OpaquePointer?, UnsafeMutableRawPointer?) -> Void = { _, message, data in
            guard let message else { return }
            onMainLoop(context(data, as: ServerCore.self), message) { $0.requestStarted(UnsafeMutableRawPointer($1)) }
        }
        signals.connect("request-started", unsafeBitCast(started, to: GCallback.self), context: self)
        serverSignals = signals

        var error: UnsafeMutablePointer<GError>?
        let socketAddress = UnsafeMutableRawPointer(address).assumingMemoryBound(to: GSocketAddress.self)
        guard let socket = Self.listeningSocket(socketAddress, &error) else {
            let message = error.map { GLibError(taking: $0).message } ?? "unknown error"
            teardown()
            return .failure(.listenFailed(host: host, port: port, message: message))
        }
        let listening = OwnedGObject(adopting: UnsafeMutableRawPointer(socket))
        if tls == nil {
            listener = listening
            do {
                frontDoor = try FrontDoor(listenFD: g_socket_get_fd(socket), limits: FrontDoor.Limits(
                    headerTimeout: limits.headerTimeout, maxURLBytes: limits.maxURLBytes, maxHeaderBytes: limits.maxHeaderBytes,
                    maxWaitingPerAddress: limits.maxWaitingConnectionsPerAddress)) { [weak self] fd in
                    let core = self
                    MainLoopActor.perform {
                        if let core { core.adopt(fd) } else { close(fd) }
                    }
                }
            } catch {
                teardown()
                return .failure(error)
            }
        } else if soup_server_listen_socket(soup, socket, SOUP_SERVER_LISTEN_HTTPS, &error) == 0 {
            // The server keeps its own reference to the socket.
            let message = error.map { GLibError(taking: $0).message } ?? "unknown error"
            teardown()
            return .failure(.listenFailed(host: host, port: port, message: message))
        }
        let actualPort = Self.localPort(socket) ?? port
        bound.withLock { $0 = (host, actualPort) }
        return .success(actualPort)
    }

    /// A connection whose request headers the front door saw complete: libsoup takes it from here.
    private func adopt(_ fd: Int32) {
        guard let soup = soupServer, !stopped, let socket = g_socket_new_from_fd(fd, nil) else {
            close(fd)
            return
        }
        defer { g_object_unref(socket) }
        guard let local = g_socket_get_local_address(socket, nil) else { return }
        defer { g_object_unref(local) }
        guard let remote = g_socket_get_remote_address(socket, nil) else { return }
        defer { g_object_unref(remote) }
        guard let connection = g_socket_connection_factory_create_connection(socket) else { return }
        defer { g_object_unref(connection) }
        handingOff = socket
        defer { handingOff = nil }
        let stream = UnsafeMutableRawPointer(connection).assumingMemoryBound(to: GIOStream.self)
        _ = soup_server_accept_iostream(soup, stream, local, remote, nil)
    }

    private static func localPort(_ socket: UnsafeMutablePointer<GSocket>) -> UInt16? {
        guard let address = g_socket_get_local_address(socket, nil) else { return nil }
        defer { g_object_unref(address) }
        let inet = UnsafeMutableRawPointer(address).assumingMemoryBound(to: GInetSocketAddress.self)
        return UInt16(exactly: g_inet_socket_address_get_port(inet))
    }

    /// Connections a burst of clients may have waiting for accept(). `soup_server_listen` keeps
    /// GSocket's default of 10: forty callers dialling at once then see resets and connect timeouts.
    static let listenBacklog: Int32 = 512

    private static func listeningSocket(_ address: UnsafeMutablePointer<GSocketAddress>,
                                        _ error: inout UnsafeMutablePointer<GError>?) -> UnsafeMutablePointer<GSocket>? {
        guard let socket = g_socket_new(g_socket_address_get_family(address), G_SOCKET_TYPE_STREAM, G_SOCKET_PROTOCOL_TCP, &error) else { return nil }
        g_socket_set_listen_backlog(socket, listenBacklog)
        guard g_socket_bind(socket, address, 1, &error) != 0, g_socket_listen(socket, &error) != 0 else {
            g_object_unref(socket)
            return nil
        }
        return socket
    }

    func stop() {
        stopped = true
        teardown()
    }

    private func teardown() {
        bound.withLock { $0.port = nil }
        guard let server else { return }
        let soup = server.typed(SoupServer.self)
        soup_server_disconnect(soup)
        serverSignals?.disconnectAll()
        serverSignals = nil
        for path in registeredPaths { soup_server_remove_handler(soup, path) } // releases our contexts
        registeredPaths = []
        let waiting = paused
        paused = [:]
        for request in waiting.values { request.task.cancel() }
        let sockets = webSockets
        webSockets = [:]
        for socket in sockets.values { socket.abort() }
        let watched = guards
        guards = [:]
        for watcher in watched.values { watcher.finish() }
        deadlines.stop()
        frontDoor?.stop() // closes the connections still waiting for their headers
        frontDoor = nil
        listener = nil
        self.server = nil
    }

    // MARK: HTTP requests (main loop)

    private func handle(_ message: OpaquePointer, path: String) {
        let request = readRequest(message, path: path, includeBody: true)
        switch RouteMatch(routes: routes.withLock { $0 }, method: request.method, path: request.path) {
        case .notFound:
            write(.notFound, to: message)
        case .methodNotAllowed(let allowed):
            write(.text("method \(request.method) not allowed", status: 405, headers: ["Allow": allowed.joined(separator: ", ")]), to: message)
        case .handler(let route):
            soup_server_message_pause(message)
            let key = UnsafeMutableRawPointer(message)
            let address = UInt(bitPattern: key)
            let handler = route.handler
            // Detached, so the handler starts on the cooperative pool at once instead of after a
            // turn of the loop (a task made here would inherit its isolation); the answer hops back.
            let task = Task.detached { [self] in
                let response: HTTPServerResponse
                do {
                    response = try await handler(request)
                } catch {
                    response = .text("handler failed: \(error)", status: 500)
                }
                await respond(to: address, with: response)
            }
            paused[key] = PausedRequest(message: OwnedGObject(retaining: key), task: task)
        }
    }

    private func respond(to address: UInt, with response: HTTPServerResponse) {
        guard let key = UnsafeMutableRawPointer(bitPattern: address),
              let request = paused.removeValue(forKey: key) else { return } // aborted or stopped meanwhile
        write(response, to: request.message.opaque)
        soup_server_message_unpause(request.message.opaque)
    }

    private func requestStarted(_ key: UnsafeMutableRawPointer) {
        guards[key]?.finish()
        let message = OpaquePointer(key)
        let socket = soup_server_message_get_socket(message).map { UnsafeMutableRawPointer($0) }
            ?? handingOff.map { UnsafeMutableRawPointer($0) }
        guards[key] = RequestGuard(message: OwnedGObject(retaining: key), socket: socket.map { OwnedGObject(retaining: $0) },
                                   limits: limits, deadlines: deadlines) { [weak self] in
            self?.guards.removeValue(forKey: key)
        }
    }

    private func requestAborted(_ key: UnsafeMutableRawPointer) {
        paused.removeValue(forKey: key)?.task.cancel()
    }

    /// Sets status, headers and body. Framing headers are libsoup's business; a response that
    /// cannot be sent as given becomes a 500 saying why.
    private func write(_ response: HTTPServerResponse, to message: OpaquePointer) {
        var response = response
        if !(100...999).contains(response.status) {
            response = .text("handler returned invalid status \(response.status)", status: 500)
        } else if let problem = response.headers.validationProblem() {
            response = .text("handler returned an invalid header: \(problem)", status: 500)
        }
        soup_server_message_set_status(message, guint(response.status), nil)
        var headers = response.headers
        headers.remove("Content-Length")
        headers.remove("Transfer-Encoding")
        // No keep-alive: libsoup 3.2 never notices a client closing an idle kept-alive
        // connection (it stays in CLOSE-WAIT, holding a descriptor, for ever), and an idle
        // connection it does not read from cannot be timed out. One request per connection.
        headers["Connection"] = "close"
        appendHeaders(headers, to: soup_server_message_get_response_headers(message))
        if !response.body.isEmpty, let body = soup_server_message_get_response_body(message) {
            response.body.withUnsafeBytes { soup_message_body_append(body, SOUP_MEMORY_COPY, $0.baseAddress, gsize($0.count)) }
        }
    }

    private func readRequest(_ message: OpaquePointer, path: String, includeBody: Bool) -> HTTPServerRequest {
        let method = soup_server_message_get_method(message).map { String(cString: $0) } ?? "GET"
        let rawQuery = soup_server_message_get_uri(message).flatMap { g_uri_get_query($0) }.map { String(cString: $0) }
        let query = RequestHead.decodeQuery(rawQuery).map { URLQueryItem(name: $0.name, value: $0.value) }
        let headers = readHeaders(soup_server_message_get_request_headers(message))
        var body: [UInt8] = []
        if includeBody, let requestBody = soup_server_message_get_request_body(message),
           let flat = soup_message_body_flatten(requestBody) {
            body = copyBytes(flat)
            g_bytes_unref(flat)
        }
        let remote = soup_server_message_get_remote_host(message).map { String(cString: $0) }
        return HTTPServerRequest(method: method, path: path, query: query, headers: headers, body: body, remoteAddress: remote)
    }

    // MARK: WebSockets (main loop)

    /// Context for one WebSocket path's libsoup callback.
    private final class WebSocketEndpoint: Sendable {
        let core: ServerCore
        let route: WebSocketRoute
        init(core: ServerCore, route: WebSocketRoute) {
            self.core = core
            self.route = route
        }
    }

    private func registerWebSocket(_ route: WebSocketRoute) {
        guard let soup = soupServer else { return }
        if registeredPaths.contains(route.path) { soup_server_remove_handler(soup, route.path) }
        registeredPaths.insert(route.path)
        var protocolList: [UnsafeMutablePointer<CChar>?] = route.protocols.map { strdup($0) } + [nil]
        defer { protocolList.forEach { free($0) } }
        protocolList.withUnsafeMutableBufferPointer { list in
            soup_server_add_websocket_handler(soup, route.path, route.origin, route.protocols.isEmpty ? nil : list.baseAddress,
                                              { _, message, path, connection, data in
                guard let message, let connection, let endpoint = context(data, as: WebSocketEndpoint.self) else { return }
                let path = path.map { String(cString: $0) } ?? "/"
                onMainLoop(endpoint, (connection, message)) { endpoint, pointers in
                    endpoint.core.accept(pointers.0, message: pointers.1, path: path, route: endpoint.route)
                }
            }, retainAsyncContext(WebSocketEndpoint(core: self, route: route)), { data in
                _ = releaseAsyncContext(data, as: WebSocketEndpoint.self)
            })
        }
    }

    private func accept(_ connection: OpaquePointer, message: OpaquePointer, path: String, route: WebSocketRoute) {
        guard !stopped else { return }
        let request = readRequest(message, path: path, includeBody: false)
        let scheme = tls == nil ? "ws" : "wss"
        let host = request.headers["Host"] ?? "\(boundHost):\(boundPort ?? 0)"
        let socket = WebSocketCore.wrap(UnsafeMutableRawPointer(connection), url: "\(scheme)://\(host)\(path)", side: .server,
                                        maxIncomingPayloadSize: route.maxIncomingPayloadSize ?? maxIncomingWebSocketPayloadSize,
                                        maxOutgoingBytes: maxOutgoingWebSocketBytes, maxUnreadIncomingBytes: maxUnreadIncomingWebSocketBytes,
                                        keepaliveInterval: route.keepaliveInterval)
        let core = socket.core
        if core.currentState != .closed {
            let id = ObjectIdentifier(core)
            webSockets[id] = core
            core.onClosed = { [weak self] in self?.webSockets.removeValue(forKey: id) }
        }
        let handler = route.handler
        // Detached: a task made here would inherit the main loop's isolation and run the
        // application's synchronous handler on the loop thread.
        Task.detached { handler(socket, request) }
    }
}
