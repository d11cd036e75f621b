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
    /// One attempt to open the signaling socket failed (retried within the window when transient).
    case socketConnect(url: String, HTTPError)
    case notJoined
    /// One join attempt failed on the way (retried within the window when transient).
    case transport(url: String, HTTPError)
    /// One join attempt was answered with a non-2xx status.
    case joinStatus(url: String, Int)

    package var description: String {
        switch self {
        case .transport(let url, let error): "joining \(url) failed: \(error)"
        case .joinStatus(let url, let status): "joining \(url) failed: HTTP \(status)"
        case .join(let url, let reason): "joining \(url) failed: \(reason)"
        case .roomFull(let room): "room \(room) already has two participants"
        case .socket(let url, let reason): "signaling socket \(url): \(reason)"
        case .socketConnect(let url, let error): "signaling socket \(url): \(error)"
        case .notJoined: "join the room before opening its signaling socket"
        }
    }
}

/// What the signaling socket delivers.
package enum RoomSignalingEvent: Sendable {
    case message(ECVProtocol.SignalingMessage)
    /// The collider reported an error (e.g. a payload it could not relay).
    case failure(String)
    /// The socket dropped; it is being reopened and re-registered (why it dropped).
    case reconnecting(reason: String)
    /// A new socket is registered in the same slot; what waited meanwhile was sent.
    case reconnected
    /// The socket closed for good: closed as an answer, or not reopened within the window.
    case closed(code: UInt16, reason: String)
}

/// One participant of an AppRTC room (docs/protocol.md §2): join over HTTP, register on the
/// collider WebSocket, send and receive offer/answer/candidates/bye, leave.
///
/// A socket that drops (not closed as an answer: 1000, 4401, 4404, 4409) is reopened with
/// backoff and registered again as the same client for up to `reconnectWindow`; the collider
/// keeps the slot and queues what the other side sends meanwhile, and what this side sends
/// waits here (at most `maxPending` messages; beyond that a message is dropped and logged).
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
        /// How long a failed `/join` is retried and a dropped socket reconnected (0: never).
        package var reconnectWindow: Duration = .seconds(10)

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
    let http: HTTPClient
    /// The participant's one state: the join answer, the socket and its reader, and what waits
    /// for the registration.
    struct State {
        var joined: JoinParameters?
        var socket: WebSocketConnection?
        var reader: Task<Void, Never>?
        var registered = false
        /// Encoded `send` commands waiting for a registered, open socket, in the order sent.
        var pending: [String] = []
        /// `close()` was called, or the socket closed for good: nothing is sent or reopened any more.
        var closing = false
        var lostMessages = 0
    }
    /// The most messages kept while unregistered (a whole offer with candidates is far fewer).
    package static let maxPending = 256
    let state = Locked(State())
    let broadcaster = Broadcaster<RoomSignalingEvent>()
    /// `options.headers` plus the credential header.
    let requestHeaders: HTTPHeaders
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

    /// Opens the collider WebSocket (with the configured headers on the handshake). An attempt
    /// that fails on the way (a connect timed out, refused or reset: SYNs and the upgrade lost on
    /// a lossy path) is made again with backoff within `reconnectWindow`, the window the join and
    /// a dropped socket's reconnection have; a refusal by the collider or a TLS or pin failure
    /// ends it at once.
    package func openSocket(connectTimeout: Duration = .seconds(5)) async throws(RoomSignalingError) {
        let url = try socketURL()
        let connection: WebSocketConnection
        do {
            connection = try await retrying(within: options.reconnectWindow, isTransient: { (error: RoomSignalingError) in
                if case .socketConnect(_, let failure) = error { failure.isTransient } else { false }
            }, onRetry: { [room] error, attempt, delay in
                Logger.info("signaling: room \(room): \(error); attempt \(attempt + 1) in \(delay)")
            }) { () async throws(RoomSignalingError) in
                guard !self.state.value.closing else { throw .socket(url: url, reason: "closed while it was being opened") }
                return try await connectSocket(connectTimeout: connectTimeout)
            }
        } catch {
            guard error.attempts > 1, case .socketConnect(_, let last) = error.last else { throw error.last }
            throw .socket(url: url, reason: "\(last) (gave up after \(error.attempts) attempts)")
        }
        guard install(connection, connectTimeout: connectTimeout) else {
            try? connection.close(code: 1000, reason: "leaving") // just opened; if it closed already, it is closed
            throw .socket(url: connection.url, reason: "closed while it was being opened")
        }
    }

    private func socketURL() throws(RoomSignalingError) -> String {
        guard let parameters = state.value.joined else { throw .notJoined }
        return options.signalingUrl.map { ECVAPI.webSocketBase(ECVAPI.url(base: $0, path: ECVAPI.signalingSocket)) }
            ?? parameters.wssUrl
    }

    func connectSocket(connectTimeout: Duration) async throws(RoomSignalingError) -> WebSocketConnection {
        let url = try socketURL()
        do {
            return try await WebSocketClient.connect(
                url: url, headers: requestHeaders, connectTimeout: connectTimeout,
                options: tls.webSocketOptions(signaling: true))
        } catch {
            throw .socketConnect(url: url, error)
        }
    }

    /// Makes `connection` the current socket and reads it, and each socket reopened after it,
    /// until the participant leaves or the socket closes for good; false (nothing installed)
    /// once `close()` was called.
    func install(_ connection: WebSocketConnection, connectTimeout: Duration) -> Bool {
        let reading = Task { [weak self, broadcaster, options] in
            await Self.reconnection(window: options.reconnectWindow).run(
                from: connection,
                read: { connection in
                    let closed = await Self.deliver(connection, to: broadcaster)
                    return self?.lost(connection, closed: closed) ?? .finished
                },
                reopen: { () async throws(RoomSignalingError) in
                    guard let self, !Task.isCancelled, !self.state.value.closing else { throw .notJoined }
                    return try await self.connectSocket(connectTimeout: connectTimeout)
                },
                isTransient: { error in
                    switch error {
                    case .socket, .socketConnect: true
                    default: false
                    }
                },
                resume: { reopened, lost in await self?.resume(reopened, after: lost) ?? .stopped },
                report: { event in self?.reportReconnection(event) })
        }
        let installed = state.withLock { state -> Bool in
            guard !state.closing else { return false }
            state.socket = connection
            state.reader = reading
            return true
        }
        if !installed { reading.cancel() }
        return installed
    }

    /// Delivers what `connection` receives until it closes (without holding the participant, so
    /// one dropped without `close()` is not kept): how it closed.
    private static func deliver(_ connection: WebSocketConnection, to broadcaster: Broadcaster<RoomSignalingEvent>)
        async -> (code: UInt16, reason: String) {
        var closed: (code: UInt16, reason: String) = (1006, "connection lost")
        reading: for await event in connection.events {
            switch event {
            case .text(let text):
                // nil (undecodable) is reported as a failure below.
                switch try? ECVJSON.decode(ColliderDelivery.self, from: text) {
                case .message(let message)?: broadcaster.yield(.message(message))
                case .failure(let reason)?: broadcaster.yield(.failure(reason))
                case nil: broadcaster.yield(.failure("undecodable delivery: \(text.prefix(200))"))
                }
            case .closed(let code, let reason):
                closed = (code, reason)
                break reading
            case .binary, .error:
                continue
            }
        }
        return closed
    }

    /// `connection` closed: a loss to reconnect, or `.finished` when the participant left
    /// meanwhile (a participant that left never reconnects).
    private func lost(_ connection: WebSocketConnection, closed: (code: UInt16, reason: String)) -> SocketReconnection.Ending {
        let proceed = state.withLock { state -> Bool in
            guard state.socket === connection, !state.closing else { return false }
            state.registered = false
            return true
        }
        return proceed ? .closed(code: closed.code, reason: closed.reason) : .finished
    }

    /// Registers the socket for this room and client; messages sent before are flushed after
    /// (after a reconnection, first what the previous socket accepted but never wrote).
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
            let waiting = state.pending
            state.pending = []
            for text in waiting { transmit(text, on: connection, &state) }
        }
    }

    /// Sends a payload to the other participant, in the order of the calls. Until a socket is
    /// registered (and while a dropped one is reopened) it waits here; nothing is sent twice.
    package func send(_ message: ECVProtocol.SignalingMessage) {
        let text: String
        do { text = try ECVJSON.encodeString(ColliderCommand.send(message)) } catch {
            Logger.warn("signaling: room \(room): cannot encode \(message.kind.rawValue): \(error)")
            return
        }
        state.withLock { state in
            // A participant that left has no one left to tell.
            guard !state.closing else { return }
            guard state.registered, let connection = state.socket else { return hold(text, &state) }
            transmit(text, on: connection, &state)
        }
    }

    /// Messages dropped because too many waited for a (re)registration.
    package var lostMessages: Int { state.value.lostMessages }

    /// Sends on `connection` (under the state's lock, which `state` is). A socket that is no
    /// longer open keeps the text waiting for the next registration rather than losing it.
    private func transmit(_ text: String, on connection: WebSocketConnection, _ state: inout State) {
        guard connection.state == .open else { return hold(text, &state) }
        do { try connection.send(text: text) } catch {
            // It began closing since the check: the reconnection sends what waits.
            hold(text, &state)
        }
    }

    /// Keeps `text` for the next registration (under the state's lock), within `maxPending`.
    private func hold(_ text: String, _ state: inout State) {
        guard state.pending.count < Self.maxPending else {
            state.lostMessages += 1
            Logger.warn("signaling: room \(room): a message dropped, \(Self.maxPending) messages wait already")
            return
        }
        state.pending.append(text)
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
        let (socket, reader) = state.withLock { state in
            state.closing = true
            return (state.socket, state.reader)
        }
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
