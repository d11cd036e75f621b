internal import GLibCore
import Synchronization

/// An HTTP/1.1 and WebSocket server over libsoup 3 on the library's GLib main loop.
///
/// Handlers are async Swift: the request is paused in libsoup (`soup_server_message_pause`)
/// while the handler runs on the cooperative pool and resumed when it returns, so a slow handler
/// never holds up the loop or other requests. Routes match by method and longest path prefix at
/// segment boundaries ("/join" matches "/join" and "/join/r1", not "/joiner"); no matching path
/// gives 404, a matching path with another method 405.
public final class HTTPServer: Sendable {
    public typealias Handler = @Sendable (HTTPServerRequest) async throws -> HTTPServerResponse
    public typealias WebSocketHandler = @Sendable (WebSocketConnection, HTTPServerRequest) -> Void

    let core: ServerCore

    /// - Parameters:
    ///   - tls: serve HTTPS / WSS with this identity instead of plain HTTP.
    ///   - limits: sizes and deadlines every request must keep, checked before any handler runs.
    ///   - maxOutgoingWebSocketBytes: what each WebSocket may hold that its peer has not read (past
    ///     the kernel's send buffer); a send past it closes the socket with 1008, announced by an
    ///     `.error` event ("outgoing backlog: …") before its `.closed`. nil: no bound.
    ///   - maxUnreadIncomingWebSocketBytes: what each WebSocket's peer may have sent that its
    ///     handler has not read from `events` yet (libsoup reads as fast as the peer sends); a
    ///     message past it drops the connection (no close frame: the peer is busy sending),
    ///     announced by an `.error` event ("incoming backlog: …"). nil: no bound.
    public init(tls: TLSIdentity? = nil, limits: HTTPServerLimits = HTTPServerLimits(),
                maxIncomingWebSocketPayloadSize: Int = 4 << 20, maxOutgoingWebSocketBytes: Int? = 4 << 20,
                maxUnreadIncomingWebSocketBytes: Int? = 8 << 20) {
        core = ServerCore(tls: tls, limits: limits, maxIncomingWebSocketPayloadSize: maxIncomingWebSocketPayloadSize,
                          maxOutgoingWebSocketBytes: maxOutgoingWebSocketBytes, maxUnreadIncomingWebSocketBytes: maxUnreadIncomingWebSocketBytes)
    }

    deinit {
        let core = core
        MainLoopActor.perform { core.stop() }
    }

    /// Adds a route. `method` "*" matches any method. Later routes with the same prefix and
    /// method replace earlier ones.
    public func route(_ method: String, _ pathPrefix: String, handler: @escaping Handler) {
        core.addRoute(ServerRoute(method: method.uppercased(), prefix: normalizedPrefix(pathPrefix), handler: handler))
    }

    /// Accepts WebSocket upgrades on `path` (and below it). The handler runs on a task with the
    /// open connection and the upgrade request (headers, query); keep the connection to keep it open.
    /// - Parameters:
    ///   - protocols: subprotocols the server speaks; empty accepts clients that ask for none.
    ///   - origin: when set, only this `Origin` is accepted.
    ///   - maxIncomingPayloadSize: larger messages on these sockets close them with 1009; nil
    ///     keeps the server's `maxIncomingWebSocketPayloadSize`.
    public func webSocket(path: String, protocols: [String] = [], origin: String? = nil,
                          keepaliveInterval: Duration? = nil, maxIncomingPayloadSize: Int? = nil,
                          handler: @escaping WebSocketHandler) {
        core.addWebSocketRoute(WebSocketRoute(path: normalizedPrefix(path), protocols: protocols, origin: origin,
                                              keepaliveInterval: keepaliveInterval, maxIncomingPayloadSize: maxIncomingPayloadSize,
                                              handler: handler))
    }

    /// Starts listening and returns the bound port (useful with `port: 0`).
    /// - Parameter host: an IP address: "127.0.0.1" (default), "0.0.0.0", "::1", "::".
    @discardableResult
    public func listen(host: String = "127.0.0.1", port: UInt16 = 0) async throws(HTTPServerError) -> UInt16 {
        try await core.listen(host: host, port: port).get()
    }

    /// The port listened on, nil before `listen` and after `stop`.
    public var port: UInt16? { core.boundPort }

    public var isTLS: Bool { core.tls != nil }

    /// "http://127.0.0.1:<port>" (or https), for clients in the same process.
    public var baseURL: String? {
        port.map { "\(isTLS ? "https" : "http")://\(core.boundHost.contains(":") ? "[\(core.boundHost)]" : core.boundHost):\($0)" }
    }

    /// Closes the listeners and drops every connection at once, WebSockets included (peers see the
    /// stream end without a close frame). Handlers still running are cancelled; their answers go
    /// nowhere. The server cannot listen again.
    public func stop() async {
        await core.stop()
    }
}

/// "/join/" → "/join"; "" → "/". Routes compare without the trailing slash.
private func normalizedPrefix(_ path: String) -> String {
    var result = path.hasPrefix("/") ? path : "/" + path
    while result.count > 1 && result.hasSuffix("/") { result.removeLast() }
    return result
}

struct ServerRoute: Sendable {
    let method: String
    let prefix: String
    let handler: HTTPServer.Handler

    func covers(_ path: String) -> Bool {
        prefix == "/" || path == prefix || path.hasPrefix(prefix + "/")
    }
}

struct WebSocketRoute: Sendable {
    let path: String
    let protocols: [String]
    let origin: String?
    let keepaliveInterval: Duration?
    let maxIncomingPayloadSize: Int?
    let handler: HTTPServer.WebSocketHandler
}

/// Picks the route for a request: longest covering prefix whose method matches.
enum RouteMatch {
    case handler(ServerRoute)
    case methodNotAllowed(allowed: [String])
    case notFound

    init(routes: [ServerRoute], method: String, path: String) {
        let covering = routes.filter { $0.covers(path) }.sorted { $0.prefix.count > $1.prefix.count }
        if let route = covering.first(where: { $0.method == method || $0.method == "*" }) {
            self = .handler(route)
        } else if covering.isEmpty {
            self = .notFound
        } else {
            self = .methodNotAllowed(allowed: Array(Set(covering.map(\.method))).sorted())
        }
    }
}
