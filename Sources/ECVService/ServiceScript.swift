import ECVProtocol
import Synchronization

/// The HTTP endpoints whose answers a script can delay.
public enum ServiceEndpoint: String, Sendable, Hashable, CaseIterable {
    case getRtcId, dialEx, hangup, waitForRoomInterval, waitForRoomQueueInterval, queues
    case agentLogin, agentLogout
    case join, message, leave, colliderPost, browserPage
}

/// Hooks that make the reference service misbehave on purpose, and counters that show what it
/// saw, for the SDK's and agents' tests (`service.script`). Every hook is logged under `.script`.
///
/// ```swift
/// service.script.failNextDial(status: 500)          // the next DialEx answers 500 SERVICE_FAILURE
/// service.script.delay(.join, by: .seconds(2))      // every join answer waits 2 s
/// service.script.dropQueueSocket(rtcId: id)         // close 1011, no terminal push
/// service.script.dropAgentSocket(agentId: id)       // close 1011: the agent is logged out
/// service.script.dropRoomSockets(rtcId: id)         // collider sockets closed 1011, slots kept
/// service.script.closeRoom(rtcId: id)               // bye to both peers, sockets closed 1000
/// service.script.omitICEServersInJoin()             // pc_config.iceServers == []
/// service.script.dialCount(rtcId: id)               // how many DialEx named this rtcId
/// ```
public final class ServiceScript: Sendable {
    private struct Delay {
        var duration: Duration
        /// How many more answers to delay; nil: until cleared.
        var remaining: Int?
    }

    private struct State {
        var dialFailures: [ServiceRejection] = []
        var delays: [ServiceEndpoint: Delay] = [:]
        var omitICEServers = false
        var dialCounts: [String: Int] = [:]
        var dialHeaders: [String: [RequestHeader]] = [:]
        /// rtcIds in the order first dialed, oldest first (what `recordDial` forgets first).
        var dialOrder: [String] = []
        var dialAuthenticator: DialAuthenticator?
        /// rtcId → how many more polls answer `not found`.
        var notFoundPolls: [String: Int] = [:]
    }

    private let state: Mutex<State>
    private let log: ServiceEventLog
    private let queueSockets: QueueSocketHub
    private let agentSockets: AgentSocketHub
    private let rooms: RoomHub

    init(log: ServiceEventLog, queueSockets: QueueSocketHub, agentSockets: AgentSocketHub, rooms: RoomHub,
         dialAuthenticator: DialAuthenticator?) {
        self.state = Mutex(State(dialAuthenticator: dialAuthenticator))
        self.log = log
        self.queueSockets = queueSockets
        self.agentSockets = agentSockets
        self.rooms = rooms
    }

    // MARK: DialEx

    /// The next well-formed DialEx (after its body parsed) answers this error instead of reaching
    /// the ACD. Calling it n times fails the next n dials, in order.
    public func failNextDial(status: Int = 500, code: ServiceErrorCode = .serviceFailure,
                             message: String = "scripted failure: routing backend unreachable") {
        state.withLock { $0.dialFailures.append(ServiceRejection(status: status, code: code, message: message)) }
        log.record(.script, "the next DialEx fails with \(status) \(code)")
    }

    /// Replaces the authentication hook DialEx requests pass (nil: accept all).
    public func setDialAuthenticator(_ authenticator: DialAuthenticator?) {
        state.withLock { $0.dialAuthenticator = authenticator }
        log.record(.script, authenticator == nil ? "DialEx authentication off" : "DialEx authentication hook set")
    }

    /// How many DialEx requests named `rtcId` (whatever their outcome). A transferred leg's rtcId
    /// must stay at 0: the SDK waits on it without dialing.
    public func dialCount(rtcId: String) -> Int {
        state.withLock { $0.dialCounts[rtcId, default: 0] }
    }

    /// The headers of the last DialEx for `rtcId` (where the SDK's `additionalHeaders` arrive).
    public func dialHeaders(rtcId: String) -> [RequestHeader]? {
        state.withLock { $0.dialHeaders[rtcId] }
    }

    // MARK: Polling

    /// The next `polls` polls of `rtcId` (either endpoint) answer `not found`, as a backend whose
    /// statistics source has not caught up with a fresh DialEx does; the call itself is unchanged.
    public func answerNotFound(rtcId: String, polls: Int) {
        state.withLock { $0.notFoundPolls[rtcId] = max(0, polls) }
        log.record(.script, "the next \(polls) polls of \(rtcId) answer not found", rtcId: rtcId)
    }

    /// Whether this poll of `rtcId` is scripted to answer `not found` (and counts it).
    func takeNotFoundPoll(rtcId: String) -> Bool {
        state.withLock { state in
            guard let remaining = state.notFoundPolls[rtcId], remaining > 0 else { return false }
            state.notFoundPolls[rtcId] = remaining > 1 ? remaining - 1 : nil
            return true
        }
    }

    // MARK: Timing

    /// Delays the answers of `endpoint` by `duration`: the next `times` answers, or all of them
    /// until `clearDelay` when `times` is nil.
    public func delay(_ endpoint: ServiceEndpoint, by duration: Duration, times: Int? = nil) {
        state.withLock { $0.delays[endpoint] = Delay(duration: duration, remaining: times) }
        log.record(.script, "answers of \(endpoint.rawValue) delayed by \(duration)" + (times.map { " (\($0)×)" } ?? ""))
    }

    public func clearDelay(_ endpoint: ServiceEndpoint) {
        _ = state.withLock { $0.delays.removeValue(forKey: endpoint) }
    }

    // MARK: Sockets and rooms

    /// Closes the queue socket of `rtcId` without a terminal push (the SDK reconnects, or reports
    /// `QUEUE_SOCKET_CLOSED` when it may not). Returns false when no queue socket is attached to that call.
    @discardableResult
    public func dropQueueSocket(rtcId: String, code: UInt16 = 1011, reason: String = "dropped by script") -> Bool {
        let dropped = queueSockets.drop(rtcId: rtcId, code: code, reason: reason)
        log.record(.script, dropped ? "queue socket of \(rtcId) dropped (\(code))" : "no queue socket of \(rtcId) to drop",
                   rtcId: rtcId)
        return dropped
    }

    /// Closes the collider sockets registered in room `rtcId` as a network failure would (no
    /// `bye`, the slots kept): the SDK and the agent bot must reconnect without ending the call.
    /// Returns how many sockets were closed.
    @discardableResult
    public func dropRoomSockets(rtcId: String, code: UInt16 = 1011, reason: String = "dropped by script") -> Int {
        let dropped = rooms.dropSockets(rtcId, code: code, reason: reason)
        log.record(.script, "\(dropped) collider socket(s) of room \(rtcId) dropped (\(code))", rtcId: rtcId)
        return dropped
    }

    /// Closes the agent socket of `agentId` as a failure would (an oversized frame, a crash): the
    /// service then logs the agent out, as for any lost agent socket. Returns false when the agent
    /// has no socket.
    @discardableResult
    public func dropAgentSocket(agentId: String, code: UInt16 = 1011, reason: String = "dropped by script") -> Bool {
        let dropped = agentSockets.drop(agentId: agentId, code: code, reason: reason)
        log.record(.script, dropped ? "agent socket of \(agentId) dropped (\(code))" : "no agent socket of \(agentId) to drop")
        return dropped
    }

    /// Closes the room `rtcId` as if its call had ended: `bye` to each registered client, sockets
    /// closed with 1000, stored messages forgotten. Returns false when no such room exists.
    @discardableResult
    public func closeRoom(rtcId: String) -> Bool {
        let closed = rooms.closeRoom(rtcId, why: "closed by script")
        log.record(.script, closed ? "room \(rtcId) closed" : "no room \(rtcId) to close", rtcId: rtcId)
        return closed
    }

    /// Join answers carry an empty `iceServers` list (the SDK must then use its own servers or
    /// fail with `NO_ICE_SERVERS_FOUND`) until called with false.
    public func omitICEServersInJoin(_ omit: Bool = true) {
        state.withLock { $0.omitICEServers = omit }
        log.record(.script, omit ? "join answers carry no ICE servers" : "join answers carry the configured ICE servers")
    }

    // MARK: Used by the endpoints

    var omitsICEServers: Bool { state.withLock { $0.omitICEServers } }

    /// Counts a dial. Only the most recent `recordedDials` rtcIds are remembered, so refused
    /// dials with large headers cannot grow the service.
    func recordDial(rtcId: String, headers: [RequestHeader]) {
        state.withLock { state in
            if state.dialCounts[rtcId] == nil {
                state.dialOrder.append(rtcId)
                if state.dialOrder.count > Self.recordedDials {
                    let forgotten = state.dialOrder.removeFirst()
                    state.dialCounts[forgotten] = nil
                    state.dialHeaders[forgotten] = nil
                }
            }
            state.dialCounts[rtcId, default: 0] += 1
            state.dialHeaders[rtcId] = headers
        }
    }

    static let recordedDials = 1024

    /// The scripted failure or authentication verdict for this dial, if any.
    func verdict(for request: DialAuthorizationRequest) -> ServiceRejection? {
        let (failure, authenticator) = state.withLock { state -> (ServiceRejection?, DialAuthenticator?) in
            if !state.dialFailures.isEmpty { return (state.dialFailures.removeFirst(), nil) }
            return (nil, state.dialAuthenticator)
        }
        if let failure { return failure }
        return authenticator?(request)
    }

    /// Waits as scripted before answering `endpoint`.
    func applyDelay(_ endpoint: ServiceEndpoint) async {
        let duration = state.withLock { state -> Duration? in
            guard var delay = state.delays[endpoint] else { return nil }
            if let remaining = delay.remaining {
                delay.remaining = remaining - 1
                state.delays[endpoint] = remaining - 1 > 0 ? delay : nil
            }
            return delay.duration
        }
        guard let duration else { return }
        log.record(.script, "answer of \(endpoint.rawValue) held for \(duration)")
        // Only cancellation ends the wait early, and then the answer need not wait any longer.
        try? await Task.sleep(for: duration)
    }
}
