import ECVProtocol
import Foundation
import Soup
import Synchronization

/// The agent sockets (`/agent/socket`, docs/protocol.md §3.2–§3.4): commands in, events out. One
/// socket per agent; a newer one replaces the older (4409). Losing the socket logs the agent out.
final class AgentSocketHub: Sendable {
    private struct Attached {
        let connection: WebSocketConnection
        let session: AgentSocketSession
    }

    /// agentId → its current socket.
    private let attached = Mutex<[String: Attached]>([:])
    let open = OpenSockets()
    private let log: ServiceEventLog

    init(log: ServiceEventLog) {
        self.log = log
    }

    func accept(_ connection: WebSocketConnection, request: HTTPServerRequest, engine: ACDEngine, timer: DeadlineTimer) {
        open.insert(connection)
        let token = request.queryValue(ECVAPI.tokenQueryName).flatMap { $0.isEmpty ? nil : $0 }
            ?? bearerToken(request.headers["Authorization"])
        let named = request.queryValue(ECVAPI.agentIdQueryName).flatMap { $0.isEmpty ? nil : $0 }
        let owner = token.flatMap { engine.agentId(forToken: $0) }
        let agentId = named ?? owner ?? ""
        let session = AgentSocketSession()

        if !agentId.isEmpty, !engine.hasAgent(agentId) {
            session.set(.refused)
            refuse(connection, code: .unknownAgent, message: "unknown agent \"\(agentId)\"", close: ECVCloseCode.notFound)
        } else if owner == nil || owner != agentId {
            session.set(.refused)
            refuse(connection, code: .unauthorized, message: token == nil ? "the agent token is missing" : "the agent token is not valid",
                   close: ECVCloseCode.unauthorized)
        } else {
            engine.attachAgentSocket(agentId: agentId) { [self] greeting in
                attach(connection, session: session, agentId: agentId, greeting: greeting)
            }
        }
        // Reading starts only now, so every command reaches the engine after the greeting was
        // queued: its ack and events then follow the greeting on this socket.
        watch(connection, log: log, .agent, onText: { [self] text in
            receive(text, from: agentId, on: connection, session: session, engine: engine, timer: timer)
        }, onClosed: { [self] code, reason in
            session.set(.closed)
            let wasCurrent = attached.withLock { map -> Bool in
                guard let current = map[agentId], current.connection === connection else { return false }
                map[agentId] = nil
                return true
            }
            open.remove(connection)
            guard wasCurrent else { return }
            // The doc's rule: a bot that loses its socket has lost its calls and must log in again.
            log.record(.agent, "agent socket of \(agentId) closed (\(code) \(reason)): agent logged out")
            // Throws only for an agent already gone (a REST logout came first): nothing is left to remove.
            try? engine.removeAgent(agentId)
            timer.refresh()
        })
    }

    /// Runs in the ACD's event order.
    private func attach(_ connection: WebSocketConnection, session: AgentSocketSession, agentId: String,
                        greeting: Result<AgentEvent, ACDError>) {
        guard case .success(let state) = greeting else {
            session.set(.refused)
            refuse(connection, code: .unknownAgent, message: "unknown agent \"\(agentId)\"", close: ECVCloseCode.notFound)
            return
        }
        let attachedNow = attached.withLock { map -> Bool in
            guard connection.state == .open else { return false }
            let replacing = Attached(connection: connection, session: session)
            if let previous = map.updateValue(replacing, forKey: agentId), previous.connection !== connection {
                previous.session.set(.replaced)
                previous.connection.close(code: ECVCloseCode.replaced, reason: "replaced by a newer agent socket", log: log, .agent)
            }
            send(state, on: connection)
            return true
        }
        if attachedNow { log.record(.agent, "agent socket of \(agentId) opened") }
    }

    private func receive(_ text: String, from agentId: String, on connection: WebSocketConnection,
                         session: AgentSocketSession, engine: ACDEngine, timer: DeadlineTimer) {
        guard session.phase == .accepted else { return } // refused, replaced or closed
        let request: AgentRequest
        do {
            request = try ECVJSON.decode(AgentRequest.self, from: text)
        } catch {
            let requestId = Self.requestId(in: text)
            log.record(.agent, "\(agentId) sent an invalid request: \(error)")
            send(.error(requestId: requestId, code: .badRequest, message: error.description), on: connection)
            return
        }
        let rtcId = Self.rtcId(of: request.command)
        log.record(.agent, "\(agentId) → \(request.command.kind.rawValue)" + (rtcId.map { " \($0)" } ?? ""), rtcId: rtcId)
        engine.handle(request, from: agentId) { [self] reply in
            if case .error(_, let code, let message) = reply { log.record(.agent, "\(agentId) ← error \(code): \(message)") }
            send(reply, on: connection)
        }
        timer.refresh()
    }

    /// An event from the ACD for this agent; dropped when the agent has no socket.
    func deliver(_ event: AgentEvent, agentId: String) {
        let delivered = attached.withLock { map -> Bool in
            guard let current = map[agentId] else { return false }
            send(event, on: current.connection)
            return true
        }
        let rtcId: String? = switch event {
        case .offer(let offer): offer.rtcId
        case .offerWithdrawn(let rtcId, _), .callConnected(let rtcId, _), .callEnded(let rtcId, _),
             .transferPending(let rtcId, _), .transferCancelled(let rtcId, _), .transferCompleted(let rtcId, _):
            rtcId
        case .agentState(let update): update.rtcId
        case .ack, .error: nil
        }
        var detail = event.kind.rawValue
        if case .agentState(let update) = event { detail += " \(update.state.rawValue)" }
        if let rtcId { detail += " \(rtcId)" }
        log.record(.agent, "\(agentId) ← \(detail)" + (delivered ? "" : " (no socket)"), rtcId: rtcId)
    }

    /// Logout: the socket closes normally and is not counted as a lost agent.
    func detach(agentId: String, reason: String) {
        let removed = attached.withLock { $0.removeValue(forKey: agentId) }
        removed?.session.set(.closed)
        removed?.connection.close(code: ECVCloseCode.normal, reason: reason, log: log, .agent)
    }

    /// Closes the agent's socket as a failure would; its close handler logs the agent out.
    func drop(agentId: String, code: UInt16, reason: String) -> Bool {
        guard let current = attached.withLock({ $0[agentId] }) else { return false }
        current.connection.close(code: code, reason: reason, log: log, .agent)
        return true
    }

    func closeAll(code: UInt16, reason: String) {
        attached.withLock { $0.removeAll() }
        open.closeAll(code: code, reason: reason, log: log, .agent)
    }

    private func refuse(_ connection: WebSocketConnection, code: ServiceErrorCode, message: String, close: UInt16) {
        log.record(.agent, "agent socket refused (\(close)): \(message)")
        send(.error(requestId: nil, code: code, message: message), on: connection)
        connection.close(code: close, reason: code.rawValue, log: log, .agent)
    }

    private func send(_ event: AgentEvent, on connection: WebSocketConnection) {
        connection.sendJSON(event, log: log, .agent)
    }

    private static func rtcId(of command: AgentCommand) -> String? {
        switch command {
        case .ready, .notReady: nil
        case .accept(let rtcId), .reject(let rtcId), .hangup(let rtcId), .transfer(let rtcId, _), .cancelTransfer(let rtcId):
            rtcId
        }
    }

    /// The `requestId` of a frame that did not decode, so its error still answers it.
    private static func requestId(in text: String) -> String? {
        // A frame that is no JSON object has no requestId to answer.
        guard let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] else { return nil }
        return object["requestId"] as? String
    }
}

/// Whether an agent socket may send commands.
final class AgentSocketSession: Sendable {
    enum Phase: Sendable, Equatable { case accepted, refused, replaced, closed }
    private let state = Mutex(Phase.accepted)
    var phase: Phase { state.withLock { $0 } }
    func set(_ phase: Phase) { state.withLock { $0 = phase } }
}
