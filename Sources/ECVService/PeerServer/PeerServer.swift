import ECVProtocol
import Foundation
import GLibCore
import Soup
import Synchronization

/// The PeerJS-compatible peer server (docs/protocol.md §8) inside the reference service:
/// `GET <path>/<key>/id`, `GET <path>/<key>/peers` and the socket `<path>/peerjs`.
///
/// One state (`PeerServerState`) behind one lock; what a step decides (frames, closes, log lines)
/// is delivered outside the lock, in the order the steps happened, by whichever thread finds the
/// delivery queue idle. Time comes from the service's clock; a main-loop timer ticks the state
/// while anything is registered or held.
public final class PeerServer: Sendable {
    public let configuration: PeerServerConfiguration
    private let state: Mutex<PeerServerState<WebSocketConnection>>
    private let delivery = Mutex(Delivery())
    private let clock: any ACDClock
    private let log: ServiceEventLog
    private let ticking: Mutex<MainLoop.Timer?> = Mutex(nil)
    private let manualClock: Bool
    let open = OpenSockets()

    private struct Delivery {
        var pending: [PeerServerAction<WebSocketConnection>] = []
        var draining = false
    }

    init(configuration: PeerServerConfiguration, iceServers: [ICEServer], clock: ServiceClock, log: ServiceEventLog) {
        self.configuration = configuration
        state = Mutex(PeerServerState(configuration: configuration, iceServers: configuration.iceServers ?? iceServers))
        self.clock = clock.acdClock
        if case .manual = clock { manualClock = true } else { manualClock = false }
        self.log = log
    }

    /// Adds the routes and the socket to `server`.
    func install(on server: HTTPServer, keepalive: Duration) {
        let path = configuration.normalizedPath
        server.route("*", path) { [self] request in handle(request) }
        server.webSocket(path: path + "/peerjs", keepaliveInterval: keepalive,
                         maxIncomingPayloadSize: PeerJSLimits.maxMessageBytes) { [self] connection, request in
            accept(connection, request: request)
        }
    }

    // MARK: HTTP

    func handle(_ request: HTTPServerRequest) -> HTTPServerResponse {
        let segments = request.pathSegments(after: configuration.normalizedPath)
        let origin = request.headers["Origin"]
        var headers: HTTPHeaders = ["Cache-Control": "no-store"]
        if let origin { headers["Access-Control-Allow-Origin"] = origin; headers["Vary"] = "Origin" }
        if segments == ["client"], ["GET", "HEAD"].contains(request.method.uppercased()) {
            return text(200, PeerClientPage.html, headers, type: "text/html; charset=utf-8")
        }
        guard segments.count == 2, ["GET", "HEAD"].contains(request.method.uppercased()) else {
            return text(404, "no peer server endpoint \(request.method) \(request.path)", headers)
        }
        switch segments[1] {
        case "id":
            switch state.withLock({ $0.issueId(key: segments[0], origin: origin) }) {
            case .success(let id): return text(200, id, headers, type: "text/html")
            case .failure(let refusal): return text(refusal.status, refusal.message, headers)
            }
        case "peers":
            switch state.withLock({ $0.peers(key: segments[0], origin: origin) }) {
            case .success(let ids):
                headers["Content-Type"] = "application/json"
                // An array of strings always encodes.
                return HTTPServerResponse(status: 200, headers: headers, body: [UInt8]((try? ECVJSON.encode(ids)) ?? Data("[]".utf8)))
            case .failure(let refusal): return text(refusal.status, refusal.message, headers)
            }
        default:
            return text(404, "no peer server endpoint \(request.path)", headers)
        }
    }

    private func text(_ status: Int, _ body: String, _ headers: HTTPHeaders, type: String = "text/plain; charset=utf-8") -> HTTPServerResponse {
        var all = headers
        all["Content-Type"] = type
        return HTTPServerResponse(status: status, headers: all, body: Array(body.utf8))
    }

    // MARK: Sockets

    func accept(_ connection: WebSocketConnection, request: HTTPServerRequest) {
        open.insert(connection)
        // Registered before its frames are read, so none of them finds the socket unknown.
        step {
            $0.connect(connection, key: request.queryValue("key"), id: request.queryValue("id"), token: request.queryValue("token"),
                       origin: request.headers["Origin"], now: clock.now())
        }
        watch(connection, log: log, .peer, onText: { [self] text in
            step { $0.receive(text, from: connection, now: clock.now()) }
        }, onClosed: { [self] code, _ in
            open.remove(connection)
            step { $0.socketClosed(connection, code: code, now: clock.now()) }
        })
        armTimer()
    }

    /// With a manual clock: runs what fell due (tests advance the clock, then tick).
    public func tick() { step { $0.tick(now: clock.now()) } }

    /// Peer ids registered now under `key` (connected or within their grace).
    public func registeredPeers(key: String) -> [String] {
        state.withLock { $0.clients.keys.filter { $0.key == key }.map(\.id).sorted() }
    }

    /// Closes every peer socket with 1001 (the service is stopping).
    func closeAll() {
        ticking.withLock { $0?.cancel(); $0 = nil }
        open.closeAll(code: ECVCloseCode.goingAway, reason: "service shutting down", log: log, .peer)
    }

    // MARK: Steps and delivery

    private func step(_ body: (inout PeerServerState<WebSocketConnection>) -> [PeerServerAction<WebSocketConnection>]) {
        let actions = state.withLock { body(&$0) }
        guard !actions.isEmpty else { return }
        let drain = delivery.withLock { delivery -> Bool in
            delivery.pending += actions
            defer { delivery.draining = true }
            return !delivery.draining
        }
        guard drain else { return }
        while true {
            let batch = delivery.withLock { delivery -> [PeerServerAction<WebSocketConnection>] in
                defer { delivery.pending = [] }
                if delivery.pending.isEmpty { delivery.draining = false }
                return delivery.pending
            }
            if batch.isEmpty { return }
            for action in batch { perform(action) }
        }
    }

    private func perform(_ action: PeerServerAction<WebSocketConnection>) {
        switch action {
        case .send(let socket, let message): socket.sendJSON(message, log: log, .peer)
        case .sendText(let socket, let text): socket.sendIfOpen(text)
        case .close(let socket, let code, let reason): socket.close(code: code, reason: reason, log: log, .peer)
        case .log(let text): log.record(.peer, text)
        }
    }

    /// A timer at a quarter of the shortest timeout (50 ms to 1 s) while anyone is registered or
    /// anything is held; it stops itself when the server is idle.
    private func armTimer() {
        guard !manualClock else { return }
        let shortest = [configuration.expireTimeout, configuration.aliveTimeout, configuration.leaveGrace].filter { $0 > .zero }.min() ?? .seconds(1)
        let period = min(max(shortest / 4, .milliseconds(50)), .seconds(1))
        ticking.withLock { timer in
            guard timer == nil else { return }
            timer = MainLoop.shared.schedule(every: period) { [weak self] in
                guard let self else { return false }
                self.tick()
                // Decided under the timer's lock, so a peer that registers meanwhile re-arms it.
                return self.ticking.withLock { timer in
                    guard self.state.withLock({ $0.isIdle }) else { return true }
                    timer = nil
                    return false
                }
            }
        }
    }
}
