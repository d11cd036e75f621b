import ECV
import ECVProtocol
import Foundation
import GLibCore
import GStreamer
import Soup

/// A headless agent: logs in, works queues, is offered calls by the service, and handles them.
///
/// The service routes; the bot never polls. Everything arrives on the agent socket and is
/// reported, in order, through `events()`. Several bots can run in one process.
public final class AgentBot: Sendable {
    public let configuration: AgentBotConfiguration
    private let http: HTTPClient
    private let broadcaster = Broadcaster<AgentBotEvent>()

    private struct State {
        var agentId: String?
        var token: String?
        var socket: WebSocketConnection?
        var reader: Task<Void, Never>?
        var nextRequest = 0
        var pending: [String: OneShot<Void, AgentBotError>] = [:]
        var calls: [String: AgentCall] = [:]
        /// Calls the service ended or transferred whose media is still closing (a recording being
        /// finalised): `logout()` waits for them.
        var ending: [ObjectIdentifier: AgentCall] = [:]
        var lastState: AgentStateUpdate?
    }
    private let state = Locked(State())

    let tls: TLSSettings

    /// - Throws: `ECVConfigurationError` for a pin or CA file that cannot be honoured.
    public init(configuration: AgentBotConfiguration) throws(ECVConfigurationError) {
        self.configuration = configuration
        tls = try TLSSettings(apiPins: configuration.pinnedCertificates, signalingPins: configuration.signalingPinnedCertificates,
                              trustedCAFile: configuration.trustedCAFile)
        try tls.requireTLS(apiURLs: [configuration.serviceUrl], signalingURLs: [configuration.webrtcUrl, configuration.signalingUrl ?? ""])
        http = tls.httpClient(connectTimeout: .seconds(5), readTimeout: .seconds(10), userAgent: "ECVKit-Agent", signaling: false)
    }

    public func events() -> AsyncStream<AgentBotEvent> { broadcaster.subscribe() }
    public var agentId: String? { state.value.agentId }
    public var calls: [AgentCall] { Array(state.value.calls.values) }
    public func call(rtcId: String) -> AgentCall? { state.value.calls[rtcId] }
    public var lastState: AgentStateUpdate? { state.value.lastState }
    /// The session token from Login: the agent's credential on its socket and in its calls' rooms.
    var sessionToken: String? { state.value.token }

    // MARK: Connection

    /// Logs in and opens the agent socket.
    public func connect() async throws(AgentBotError) {
        let url = ECVAPI.url(base: configuration.serviceUrl, path: ECVAPI.agentLogin)
        let login: AgentLoginResponse
        do {
            let body = try ECVJSON.encode(AgentLoginRequest(name: configuration.name, secret: configuration.secret,
                                                           servesAccessibility: configuration.servesAccessibility ? true : nil))
            var request = HTTPRequest(method: "POST", url: url, body: body)
            request.headers["Content-Type"] = "application/json"
            // A login that reached the service creates a session, so only failures that prove it
            // did not (refused, never connected: a service still starting) are retried.
            let response = try await retryingLogin(request)
            guard response.isSuccess else {
                // An error body that is not the service's JSON still leaves the status to report.
            let error = try? ECVJSON.decode(ServiceErrorResponse.self, from: response.data)
                throw AgentBotError.login("HTTP \(response.status) \(error?.message ?? "")")
            }
            login = try ECVJSON.decode(AgentLoginResponse.self, from: response.data)
        } catch let error as AgentBotError {
            throw error
        } catch {
            throw .login("\(url): \(error)")
        }
        let socketURL = ECVAPI.webSocketBase(ECVAPI.url(base: configuration.serviceUrl, path: ECVAPI.agentSocket))
            + "?\(ECVAPI.agentIdQueryName)=\(login.agentId)"
        let socket: WebSocketConnection
        do {
            // The token travels in a header, never in the URL that errors and logs quote.
            socket = try await WebSocketClient.connect(url: socketURL, headers: ["Authorization": "Bearer \(login.token)"],
                                                       connectTimeout: .seconds(5),
                                                       options: tls.webSocketOptions(signaling: false, userAgent: "ECVKit-Agent"))
        } catch {
            throw .socket(error.description)
        }
        state.withLock { state in
            state.agentId = login.agentId
            state.token = login.token
            state.socket = socket
        }
        let reader = Task { [weak self] in
            for await event in socket.events {
                guard let self else { return }
                switch event {
                case .text(let text): self.received(text)
                case .closed(let code, let reason):
                    self.socketClosed(code: code, reason: reason)
                    return
                case .binary, .error: continue
                }
            }
        }
        state.withLock { $0.reader = reader }
    }

    /// `request`, tried again with backoff for up to 10 s while the service cannot be reached.
    private func retryingLogin(_ request: HTTPRequest) async throws -> HTTPResponse {
        do {
            return try await retrying(within: .seconds(10), isTransient: \.neverReachedServer) { () async throws(HTTPError) in
                try await http.send(request)
            }
        } catch {
            throw error.attempts > 1 ? AgentBotError.login("\(request.url): \(error)") : error.last
        }
    }

    /// Becomes ready on `queues` (default: the configured ones), waiting for the service's ack.
    public func ready(queues: [String]? = nil) async throws(AgentBotError) {
        try await request(.ready(queues: queues ?? configuration.queues))
    }

    public func notReady() async throws(AgentBotError) { try await request(.notReady) }

    /// Accepts an offered call; its media starts and a `callStarted` event follows.
    @discardableResult
    public func accept(_ offer: CallOffer) async throws(AgentBotError) -> AgentCall {
        let call = AgentCall(offer: offer, bot: self)
        state.withLock { $0.calls[offer.rtcId] = call }
        do {
            try await request(.accept(rtcId: offer.rtcId))
        } catch {
            _ = state.withLock { $0.calls.removeValue(forKey: offer.rtcId) }
            throw error
        }
        broadcaster.yield(.callStarted(call))
        if configuration.joinsRooms {
            let delay = configuration.roomJoinDelay
            Task {
                // Cancelled: the wait ends early and the call starts (or finds itself ended).
                if delay > .zero { try? await Task.sleep(for: delay) }
                await call.start()
            }
        }
        return call
    }

    public func reject(_ offer: CallOffer) async throws(AgentBotError) { try await request(.reject(rtcId: offer.rtcId)) }

    /// Logs out: the service ends this bot's calls (`AGENT_LOST`) and forgets it.
    public func logout() async {
        let (token, socket, calls, ending) = state.withLock { state in
            (state.token, state.socket, Array(state.calls.values), Array(state.ending.values))
        }
        for call in calls {
            await call.closeMedia(sendBye: true)
            call.loggedOut()
        }
        for call in ending { await call.closeMedia(sendBye: false) }
        if let token {
            var request = HTTPRequest(method: "POST", url: ECVAPI.url(base: configuration.serviceUrl, path: ECVAPI.agentLogout))
            request.headers["Authorization"] = "Bearer \(token)"
            do { _ = try await http.send(request) } catch {
                // The service logs out an agent whose socket closed anyway; this only makes it sooner.
                eventError("logout request failed: \(error)")
            }
        }
        // Closing a socket the service may already have closed: either way it is closed.
        try? socket?.close(code: 1000, reason: "logout")
        state.withLock { $0.reader?.cancel() }
        broadcaster.finish()
    }

    // MARK: Requests

    func request(_ command: AgentCommand) async throws(AgentBotError) {
        let outcome = OneShot<Void, AgentBotError>()
        let (socket, id): (WebSocketConnection?, String) = state.withLock { state in
            state.nextRequest += 1
            let id = "r\(state.nextRequest)"
            state.pending[id] = outcome
            return (state.socket, id)
        }
        guard let socket else { throw .notConnected }
        do {
            try socket.send(text: ECVJSON.encodeString(AgentRequest(command, requestId: id)))
        } catch {
            _ = state.withLock { $0.pending.removeValue(forKey: id) }
            throw .socket("cannot send \(command.kind.rawValue): \(error)")
        }
        let timer = MainLoop.shared.schedule(after: .seconds(10)) {
            outcome.resolve(.failure(.timeout("the service's answer to \(command.kind.rawValue)")))
        }
        defer { timer.cancel() }
        try await outcome.value()
    }

    // MARK: Socket events

    private func received(_ text: String) {
        // An undecodable event is logged and skipped: the socket's next message may be fine.
        guard let event = try? ECVJSON.decode(AgentEvent.self, from: text) else {
            broadcaster.yield(.error("undecodable agent event: \(text.prefix(200))"))
            return
        }
        switch event {
        case .agentState(let update):
            state.withLock { $0.lastState = update }
            broadcaster.yield(.state(update))
        case .offer(let offer):
            broadcaster.yield(.offered(offer))
            if configuration.autoAccept {
                Task {
                    do {
                        if configuration.acceptPolicy(offer) { _ = try await accept(offer) } else { try await reject(offer) }
                    } catch {
                        eventError("cannot answer the offer of \(offer.rtcId): \(error)")
                        broadcaster.yield(.error("offer \(offer.rtcId): \(error)"))
                    }
                }
            }
        case .offerWithdrawn(let rtcId, let reason):
            broadcaster.yield(.offerWithdrawn(rtcId: rtcId, reason: reason))
        case .callConnected:
            break // the accept's ack already started the call's media
        case .callEnded(let rtcId, let reason):
            if let call = takeEnding(rtcId) { call.serviceEnded(reason: reason) }
            broadcaster.yield(.callEnded(rtcId: rtcId, reason: reason))
        case .transferPending(let rtcId, let target):
            call(rtcId: rtcId)?.emit(.transferPending(target: target.description))
        case .transferCancelled(let rtcId, let reason):
            call(rtcId: rtcId)?.emit(.transferCancelled(reason: reason.rawValue))
        case .transferCompleted(let rtcId, let newRtcId):
            if let call = takeEnding(rtcId) {
                call.emit(.transferCompleted(newRtcId: newRtcId))
                call.serviceEnded(reason: .transferred)
            }
        case .ack(let requestId):
            state.withLock { $0.pending.removeValue(forKey: requestId) }?.resolve(.success(()))
        case .error(let requestId, let code, let message):
            if let requestId, let pending = state.withLock({ $0.pending.removeValue(forKey: requestId) }) {
                pending.resolve(.failure(.rejected(code: code.rawValue, message: message)))
            } else {
                broadcaster.yield(.error("\(code.rawValue): \(message)"))
            }
        }
    }

    /// The agent socket closed: the service logged the bot out. Its calls keep their media: a
    /// service that is still there ends them (`AGENT_LOST` closes their rooms, whose `bye` ends
    /// them here), and one that is gone leaves them to their own signaling, which gives up after
    /// its reconnect window (docs/protocol.md §9). So killing the service never cuts a call's media.
    private func socketClosed(code: UInt16, reason: String) {
        let pending = state.withLock { state in
            defer { state.pending = [:]; state.socket = nil }
            return Array(state.pending.values)
        }
        for outcome in pending { outcome.resolve(.failure(.socket("closed (\(code) \(reason))"))) }
        broadcaster.yield(.disconnected(code: code, reason: reason))
        broadcaster.finish()
    }

    func forget(_ call: AgentCall) {
        state.withLock { state in
            if state.calls[call.rtcId] === call { state.calls.removeValue(forKey: call.rtcId) }
            state.ending.removeValue(forKey: ObjectIdentifier(call))
        }
    }

    /// Moves the call the service ended from the calls to those ending, until it is forgotten.
    private func takeEnding(_ rtcId: String) -> AgentCall? {
        state.withLock { state in
            guard let call = state.calls.removeValue(forKey: rtcId) else { return nil }
            state.ending[ObjectIdentifier(call)] = call
            return call
        }
    }
}

extension TransferTarget {
    public var description: String {
        switch self {
        case .queue(let name): "queue \(name)"
        case .agent(let id): "agent \(id)"
        }
    }
}
