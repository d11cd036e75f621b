import ECVProtocol
import Foundation
import GLibCore
import GStreamer
import Soup
import WebRTC

/// Why joining a room or signaling through it failed.
package enum RoomSignalingError: Error, Sendable, CustomStringConvertible {
    case join(url: String, reason: String)
    case roomFull(room: String)
    case socket(url: String, reason: String)
    case notJoined

    package var description: String {
        switch self {
        case .join(let url, let reason): "joining \(url) failed: \(reason)"
        case .roomFull(let room): "room \(room) already has two participants"
        case .socket(let url, let reason): "signaling socket \(url): \(reason)"
        case .notJoined: "join the room before opening its signaling socket"
        }
    }
}

/// What the signaling socket delivers.
package enum RoomSignalingEvent: Sendable {
    case message(ECVProtocol.SignalingMessage)
    /// The collider reported an error (e.g. a payload it could not relay).
    case failure(String)
    case closed(code: UInt16, reason: String)
}

/// One participant of an AppRTC room (docs/protocol.md §2): join over HTTP, register on the
/// collider WebSocket, send and receive offer/answer/candidates/bye, leave.
package final class RoomSignaling: Sendable {
    package struct Options: Sendable {
        package var webrtcUrl: String
        /// The collider's base URL; nil uses the join answer's `wss_url`.
        package var signalingUrl: String?
        package var headers: [String: String]
        package var joinConnectTimeout: Duration
        package var joinReadTimeout: Duration
        /// Pins the room server's and collider's certificates must match (docs/protocol.md §0.2).
        package var pinnedCertificates: [String]
        /// A PEM file of CA certificates trusted instead of the system store.
        package var trustedCAFile: String?
        /// The call credential for this participant's slot (docs/protocol.md §1.9): the caller
        /// token from DialEx, or an agent's session token. Sent as `X-ECV-Token` on the join, the
        /// leave and the socket's upgrade; nil sends none (a backend without tokens).
        package var credential: String?

        package init(webrtcUrl: String, signalingUrl: String? = nil, headers: [String: String] = [:],
                    joinConnectTimeout: Duration = .seconds(3), joinReadTimeout: Duration = .seconds(3),
                    pinnedCertificates: [String] = [], credential: String? = nil, trustedCAFile: String? = nil) {
            self.credential = credential
            self.trustedCAFile = trustedCAFile
            self.webrtcUrl = webrtcUrl
            self.signalingUrl = signalingUrl
            self.headers = headers
            self.joinConnectTimeout = joinConnectTimeout
            self.joinReadTimeout = joinReadTimeout
            self.pinnedCertificates = pinnedCertificates
        }
    }

    package let room: String
    package let options: Options
    private let http: HTTPClient
    /// The participant's one state: the join answer, the socket and its reader, and what waits
    /// for the registration.
    private struct State {
        var joined: JoinParameters?
        var socket: WebSocketConnection?
        var reader: Task<Void, Never>?
        var registered = false
        var pending: [ECVProtocol.SignalingMessage] = []
    }
    private let state = Locked(State())
    private let broadcaster = Broadcaster<RoomSignalingEvent>()
    /// `options.headers` plus the credential header.
    private let requestHeaders: HTTPHeaders
    private let tls: TLSSettings

    /// - Throws: `ECVConfigurationError` for a pin or CA file that cannot be honoured.
    package init(room: String, options: Options) throws(ECVConfigurationError) {
        self.room = room
        self.options = options
        tls = try TLSSettings(apiPins: [], signalingPins: options.pinnedCertificates, trustedCAFile: options.trustedCAFile)
        var headers = HTTPHeaders(options.headers)
        if let credential = options.credential, !credential.isEmpty { headers[ECVAPI.callTokenHeader] = credential }
        requestHeaders = headers
        http = tls.httpClient(connectTimeout: options.joinConnectTimeout, readTimeout: options.joinReadTimeout,
                              userAgent: "ECVKit", signaling: true)
    }

    /// The parameters of the join answer, once joined.
    package var parameters: JoinParameters? { state.value.joined }

    /// Everything the socket delivers from now on.
    package func events() -> AsyncStream<RoomSignalingEvent> { broadcaster.subscribe() }

    /// `POST /join/<room>` with the configured headers and timeouts.
    package func join() async throws(RoomSignalingError) -> JoinParameters {
        let url = ECVAPI.url(base: options.webrtcUrl, path: ECVAPI.joinPath(room: room))
        let response: HTTPResponse
        do {
            response = try await http.send(HTTPRequest(method: "POST", url: url, headers: requestHeaders))
        } catch {
            throw .join(url: url, reason: error.description)
        }
        guard response.isSuccess else { throw .join(url: url, reason: "HTTP \(response.status)") }
        let answer: JoinResponse
        do { answer = try ECVJSON.decode(JoinResponse.self, from: response.data) } catch {
            throw .join(url: url, reason: "unexpected answer: \(error)")
        }
        switch answer.result {
        case .success:
            guard let parameters = answer.params else { throw .join(url: url, reason: "SUCCESS without params") }
            state.withLock { $0.joined = parameters }
            return parameters
        case .full:
            throw .roomFull(room: room)
        default:
            throw .join(url: url, reason: "result \(answer.result.rawValue)")
        }
    }

    /// Opens the collider WebSocket (with the configured headers on the handshake).
    package func openSocket(connectTimeout: Duration = .seconds(5)) async throws(RoomSignalingError) {
        guard let parameters = state.value.joined else { throw .notJoined }
        let url = options.signalingUrl.map { ECVAPI.webSocketBase(ECVAPI.url(base: $0, path: ECVAPI.signalingSocket)) }
            ?? parameters.wssUrl
        let connection: WebSocketConnection
        do {
            connection = try await WebSocketClient.connect(
                url: url, headers: requestHeaders, connectTimeout: connectTimeout,
                options: tls.webSocketOptions(signaling: true))
        } catch {
            throw .socket(url: url, reason: error.description)
        }
        let broadcaster = self.broadcaster
        let reading = Task {
            for await event in connection.events {
                switch event {
                case .text(let text):
                    // nil (undecodable) is reported as a failure below.
                    switch try? ECVJSON.decode(ColliderDelivery.self, from: text) {
                    case .message(let message)?: broadcaster.yield(.message(message))
                    case .failure(let reason)?: broadcaster.yield(.failure(reason))
                    case nil: broadcaster.yield(.failure("undecodable delivery: \(text.prefix(200))"))
                    }
                case .closed(let code, let reason):
                    broadcaster.yield(.closed(code: code, reason: reason))
                    return
                case .binary, .error:
                    continue
                }
            }
        }
        state.withLock { state in
            state.socket = connection
            state.reader = reading
        }
    }

    /// Registers the socket for this room and client; messages sent before are flushed after.
    package func register() throws(RoomSignalingError) {
        guard let parameters = state.value.joined, let connection = state.value.socket else { throw .notJoined }
        do {
            try connection.send(text: ECVJSON.encodeString(ColliderCommand.register(roomId: parameters.roomId, clientId: parameters.clientId)))
        } catch {
            throw .socket(url: connection.url, reason: "register: \(error)")
        }
        // Under the lock, so a message sent meanwhile cannot overtake the ones that waited.
        state.withLock { state in
            state.registered = true
            for message in state.pending { transmit(message, on: connection) }
            state.pending = []
        }
    }

    /// Sends a payload to the other participant (queued until registered), in the order of the calls.
    package func send(_ message: ECVProtocol.SignalingMessage) {
        state.withLock { state in
            guard state.registered, let connection = state.socket else { state.pending.append(message); return }
            transmit(message, on: connection)
        }
    }

    private func transmit(_ message: ECVProtocol.SignalingMessage, on connection: WebSocketConnection) {
        // A room the service closed (call ended, transferred) has no one left to tell.
        guard connection.state == .open else { return }
        do {
            try connection.send(text: ECVJSON.encodeString(ColliderCommand.send(message)))
        } catch {
            Logger.warn("signaling: cannot send \(message.kind.rawValue) in room \(room): \(error)")
        }
    }

    /// `POST /leave/<room>/<client>` (best effort).
    package func leave() async {
        guard let parameters = state.value.joined else { return }
        let url = ECVAPI.url(base: options.webrtcUrl, path: ECVAPI.leavePath(room: room, client: parameters.clientId))
        do { _ = try await http.send(HTTPRequest(method: "POST", url: url, headers: requestHeaders)) } catch {
            // The room forgets a participant whose socket closed anyway; the leave only makes it sooner.
            Logger.debug("signaling: leaving room \(room) failed: \(error)")
        }
    }

    /// Ends this participant's part in the call: tells the other side (`bye`) when asked, closes
    /// the peer connection, leaves the room and closes the socket. Caller and agent end calls alike.
    package func hangUp(peer: PeerConnection?, sendBye: Bool) async {
        if sendBye { send(.bye) }
        await peer?.close()
        await leave()
        close()
    }

    /// Closes the socket; the event stream ends.
    package func close() {
        let (socket, reader) = state.withLock { ($0.socket, $0.reader) }
        // Closing a socket the collider may already have closed: either way it is closed.
        try? socket?.close(code: 1000, reason: "leaving")
        reader?.cancel()
        broadcaster.finish()
    }
}

extension ECVProtocol.SignalingMessage {
    /// The peer connection's form of this payload.
    package var peerMessage: WebRTCSignaling {
        switch self {
        case .offer(let sdp): .offer(sdp: sdp)
        case .answer(let sdp): .answer(sdp: sdp)
        case .candidate(let candidate): .candidate(mlineIndex: candidate.sdpMLineIndex, mid: candidate.sdpMid, candidate: candidate.candidate)
        case .bye: .bye
        }
    }

    package init(_ message: WebRTCSignaling) {
        switch message {
        case .offer(let sdp): self = .offer(sdp: sdp)
        case .answer(let sdp): self = .answer(sdp: sdp)
        case .candidate(let mline, let mid, let candidate):
            self = .candidate(ICECandidate(sdpMLineIndex: mline, sdpMid: mid ?? "", candidate: candidate))
        case .bye: self = .bye
        }
    }
}

/// The WebRTC layer's signaling message (same cases, transport-free).
package typealias WebRTCSignaling = WebRTC.SignalingMessage
