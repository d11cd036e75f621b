import ECVProtocol
import Foundation
import GLibCore
import Soup
import Synchronization

/// What the server's socket delivers.
enum PeerServerLinkEvent: Sendable {
    case message(PeerJSMessage)
    /// A frame that is not a PeerJS message (logged, then ignored).
    case invalid(String)
    case closed(code: UInt16, reason: String)
}

/// A peer's link to its PeerJS server (docs/protocol.md §8): the id and peer-list requests, and
/// the socket with its heartbeat.
final class PeerServerLink: Sendable {
    let options: PeerOption
    private let http: HTTPClient
    private struct State {
        var socket: WebSocketConnection?
        var tasks: [Task<Void, Never>] = []
    }
    private let state = Mutex(State())

    init(options: PeerOption) {
        self.options = options
        http = HTTPClient(connectTimeout: options.connectTimeout, readTimeout: options.connectTimeout, userAgent: "ECVKit-Peer",
                          maxResponseBytes: 1 << 20)
    }

    /// A peer dropped without `destroy()` still closes its socket.
    deinit {
        let (socket, tasks) = state.withLock { ($0.socket, $0.tasks) }
        tasks.forEach { $0.cancel() }
        // Closing a socket the server may already have closed: either way it is closed.
        try? socket?.close(code: 1000, reason: "gone")
    }

    private var headers: HTTPHeaders {
        var headers = HTTPHeaders()
        if let origin = options.origin { headers["Origin"] = origin }
        return headers
    }

    private func url(_ last: String) -> String {
        "\(options.httpBase)\(options.key.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? options.key)/\(last)"
    }

    /// `GET <path>/<key>/id`: an id the server made for us.
    func fetchId() async throws(PeerError) -> String {
        let response = try await get(url("id") + "?ts=\(UInt64(Date().timeIntervalSince1970 * 1000))")
        let id = (response.text ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        guard PeerJSLimits.isValidId(id) else { throw PeerError(.serverError, "the server's id \"\(id.prefix(80))\" is not a PeerJS id") }
        return id
    }

    /// `GET <path>/<key>/peers`.
    func listPeers() async throws(PeerError) -> [String] {
        // A stock server refuses with a bare 401 (peerjs-server) or 403 (python-peerjs-server) when
        // discovery is off; the key itself was taken (OPEN came), so that is what it means.
        let response = try await get(url("peers")) { status, body in
            [401, 403].contains(status) ? PeerError(.serverError, "the server does not list peers: peer discovery is off (HTTP \(status) \(body))") : nil
        }
        do { return try ECVJSON.peerIds(from: response.data) } catch {
            throw PeerError(.serverError, "the peer list is not a JSON array of ids: \(error)")
        }
    }

    /// - Parameter refusal: the error for a refusal (status, body) this request reads its own way; nil: the usual.
    private func get(_ url: String, refusal: (Int, String) -> PeerError? = { _, _ in nil }) async throws(PeerError) -> HTTPResponse {
        let response: HTTPResponse
        do { response = try await http.send(HTTPRequest(method: "GET", url: url, headers: headers)) } catch {
            throw PeerError(.network, "cannot reach the peer server: \(error)")
        }
        guard response.isSuccess else {
            let body = String((response.text ?? "").prefix(200))
            if let error = refusal(response.status, body) { throw error }
            switch response.status {
            case 401: throw PeerError(.invalidKey, "API key \"\(options.key)\" is invalid (\(body))")
            case 403: throw PeerError(.serverError, body)
            default: throw PeerError(.serverError, "HTTP \(response.status) from \(url): \(body)")
            }
        }
        return response
    }

    /// Opens the socket as `id` and starts the heartbeat. The stream ends when the socket closes.
    func open(id: String, token: String) async throws(PeerError) -> AsyncStream<PeerServerLinkEvent> {
        let query = [("key", options.key), ("id", id), ("token", token)].map { name, value in
            "\(name)=\(value.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? value)"
        }.joined(separator: "&")
        let url = "\(options.webSocketBase)peerjs?\(query)"
        let connection: WebSocketConnection
        do {
            connection = try await WebSocketClient.connect(url: url, origin: options.origin, connectTimeout: options.connectTimeout,
                                                           options: .init(userAgent: "ECVKit-Peer", maxIncomingPayloadSize: PeerJSLimits.maxMessageBytes))
        } catch {
            throw PeerError(.network, "cannot open the peer server's socket: \(error)")
        }
        let (stream, continuation) = AsyncStream.makeStream(of: PeerServerLinkEvent.self)
        let reader = Task {
            for await event in connection.events {
                switch event {
                case .text(let text):
                    do { continuation.yield(.message(try PeerJSMessage(jsonString: text))) } catch {
                        continuation.yield(.invalid("\(error): \(text.prefix(120))"))
                    }
                case .binary: continuation.yield(.invalid("a binary frame"))
                case .error: continue
                case .closed(let code, let reason):
                    continuation.yield(.closed(code: code, reason: reason))
                    continuation.finish()
                    return
                }
            }
            continuation.finish()
        }
        let interval = options.heartbeatInterval
        let heartbeat = Task { [weak self] in
            while !Task.isCancelled {
                do { try await Task.sleep(for: interval) } catch { return } // cancelled: the link closed
                guard let self, self.send(PeerJSMessage(type: .heartbeat)) else { return }
            }
        }
        let previous = state.withLock { state -> (WebSocketConnection?, [Task<Void, Never>]) in
            defer { state.socket = connection; state.tasks = [reader, heartbeat] }
            return (state.socket, state.tasks)
        }
        previous.1.forEach { $0.cancel() }
        // A replaced socket: either way it is closed.
        try? previous.0?.close(code: 1000, reason: "replaced")
        return stream
    }

    /// Sends a message; false when there is no open socket.
    @discardableResult
    func send(_ message: PeerJSMessage) -> Bool {
        guard let socket = state.withLock({ $0.socket }), socket.state == .open else { return false }
        do { try socket.send(text: try message.jsonString()) } catch { return false }
        return true
    }

    var isOpen: Bool { state.withLock { $0.socket?.state == .open } }

    /// Closes the socket (after a last `LEAVE` when asked: the server forgets the peer at once).
    func close(leaving: Bool) {
        if leaving { send(PeerJSMessage(type: .leave)) }
        let (socket, tasks) = state.withLock { state in
            defer { state.socket = nil; state.tasks = [] }
            return (state.socket, state.tasks)
        }
        tasks.forEach { $0.cancel() }
        // Closing a socket the server may already have closed: either way it is closed.
        try? socket?.close(code: 1000, reason: leaving ? "destroyed" : "disconnected")
    }
}
