import ECVProtocol

/// One call as the ACD tracks it, from DialEx until it ends or is transferred.
struct InteractionRecord {
    enum Phase: Equatable {
        /// Dialed, not yet in the ACD (the queue-entry delay).
        case entering(until: Double)
        /// Waiting for an agent.
        case queued
        /// Ringing at an agent until the deadline.
        case offered(agentId: String, until: Double)
        /// Talking to an agent since `since`.
        case connected(agentId: String, since: Double)
    }

    let rtcId: String
    let interactionId: String
    let callerName: String
    let attributes: [String: String]
    /// `var`: the accessibility flags may change while the call waits (ACDState+Accessibility).
    var acdAttributes: [String: String]
    let customPayload: [String: String]
    let queue: String
    var priority: Int
    /// What the caller presents for this call (nil when the service issues no tokens); a
    /// transferred leg keeps its caller's token.
    let callerToken: String?
    /// Arrival order, the last tie-breaker of routing order.
    let sequence: Int
    var phase: Phase
    /// When the call entered the ACD; keeps its place in the queue across re-routes.
    var queuedAt: Double?
    /// Agents that rejected this call (or, for a transferred leg, transferred it away): never
    /// offered it again.
    var declinedBy: Set<String> = []
    var transfer: PendingTransfer?

    var connectedAgentId: String? {
        if case .connected(let agentId, _) = phase { return agentId }
        return nil
    }
}

/// A direct transfer waiting for the target agent's answer. The new leg's ids are reserved now so
/// the target's offer can name the room it will join.
struct PendingTransfer {
    let targetAgentId: String
    let newRtcId: String
    let newInteractionId: String
    let until: Double
}

struct AgentRecord {
    enum Activity: Equatable {
        case idle
        case ringing(rtcId: String)
        case busy(rtcId: String)
        case afterCall(until: Double)
    }

    let id: String
    let name: String
    let token: String
    let sequence: Int
    var queues: Set<String> = []
    /// What the agent asked for; the service clears it on an unanswered offer.
    var wantsReady = false
    var activity: Activity = .idle
    /// Since when the agent has been idle: the longest-idle ready agent gets the next call.
    var idleSince: Double
    var reason: String?
    /// Offered callers flagged hearing or visually impaired before other free agents are.
    var servesAccessibility = false

    var status: AgentStatus {
        switch activity {
        case .idle: wantsReady ? .ready : .notReady
        case .ringing: .ringing
        case .busy: .busy
        case .afterCall: .afterCall
        }
    }

    var isAvailable: Bool { activity == .idle && wantsReady }

    var stateUpdate: AgentStateUpdate {
        let rtcId: String? = switch activity {
        case .ringing(let rtcId), .busy(let rtcId): rtcId
        case .idle, .afterCall: nil
        }
        return AgentStateUpdate(agentId: id, state: status, queues: queues.sorted(), rtcId: rtcId, reason: reason)
    }
}

/// What the service still knows about a call that is over.
struct EndedRecord {
    enum Outcome: Equatable {
        case ended(CallEndReason)
        case transferred(newRtcId: String)
    }

    let outcome: Outcome
    let forgetAt: Double
    /// The ended call's caller token: polling and Hangup still need it while the outcome is kept.
    let callerToken: String?
}

/// The whole ACD: a value type mutated only under the engine's lock. Operations append the events
/// they cause to `outbox` in the order the world should see them.
///
/// The tables are the truth; `index` is derived from them and brought up to date from the
/// records written since (`reindex()`) before anything reads it, so every request costs
/// O(log n) in the calls and agents held, never a scan (Benchmarks/ACDRouting measures it).
struct ACDState {
    var configuration: ACDConfiguration
    var ids: IdentifierSource
    var now: Double
    var sequence = 0
    /// rtcIds from GetRtcId not yet dialed → when they expire.
    var issued = TrackedTable<Double>()
    var interactions = TrackedTable<InteractionRecord>()
    /// Reserved rtcId of a pending direct transfer's new leg → the rtcId being transferred.
    var transferLegs: [String: String] = [:]
    var agents = TrackedTable<AgentRecord>()
    var agentIdsByToken: [String: String] = [:]
    var ended = TrackedTable<EndedRecord>()
    /// Recent handle times per queue, oldest first.
    var handleTimes: [String: [Double]] = [:]
    var outbox: [ACDEvent] = []
    /// Queues in order, free agents, deadlines: derived from the tables above (`reindex()`).
    var index = ACDIndex()
    /// Set by `shutDown()`: nothing is routed or dialed any more.
    var isShutDown = false

    init(configuration: ACDConfiguration, now: Double) {
        self.configuration = configuration
        self.ids = IdentifierSource(style: configuration.identifiers)
        self.now = now
    }

    mutating func nextSequence() -> Int {
        sequence += 1
        return sequence
    }

    mutating func emit(_ event: ACDEvent) { outbox.append(event) }

    mutating func emitAgentState(_ agentId: String) {
        guard let agent = agents[agentId] else { return }
        emit(.toAgent(agentId: agentId, .agentState(agent.stateUpdate)))
    }

    /// Removes a call and remembers how it ended; its room closes.
    mutating func forget(_ rtcId: String, outcome: EndedRecord.Outcome) {
        let callerToken = interactions.removeValue(forKey: rtcId)?.callerToken
        if configuration.endedCallRetention > 0 {
            ended[rtcId] = EndedRecord(outcome: outcome, forgetAt: now + configuration.endedCallRetention,
                                       callerToken: callerToken)
        }
        emit(.roomClosed(rtcId: rtcId))
    }

    /// An agent's call is over: wrap-up, then idle.
    mutating func finishCall(agentId: String) {
        guard var agent = agents[agentId] else { return }
        if configuration.afterCallWork > 0 {
            agent.activity = .afterCall(until: now + configuration.afterCallWork)
        } else {
            agent.activity = .idle
            agent.idleSince = now
        }
        agents[agentId] = agent
        emitAgentState(agentId)
    }

    /// An offer ended without a call: the agent is idle again and keeps its place in the idle order.
    mutating func releaseRinging(agentId: String) {
        agents[agentId]?.activity = .idle
    }

    mutating func recordHandleTime(queue: String, since: Double) {
        var samples = handleTimes[queue, default: []]
        samples.append(max(0, now - since))
        if samples.count > configuration.handleTimeSamples {
            samples.removeFirst(samples.count - configuration.handleTimeSamples)
        }
        handleTimes[queue] = samples
    }

    func averageHandleTime(queue: String) -> Double? {
        guard let samples = handleTimes[queue], !samples.isEmpty else { return nil }
        return samples.reduce(0, +) / Double(samples.count)
    }

    func requireAgent(_ agentId: String) throws(ACDError) -> AgentRecord {
        guard let agent = agents[agentId] else { throw .unknownAgent(agentId) }
        return agent
    }

    func requireQueue(_ queue: String, field: String) throws(ACDError) {
        guard !queue.isEmpty else { throw .invalidField(field: field, reason: "must not be empty") }
        guard configuration.queues.contains(queue) else { throw .unknownQueue(queue) }
    }
}
