import ECVProtocol
import Foundation

extension ACDState {
    mutating func login(name: String, servesAccessibility: Bool = false) throws(ACDError) -> AgentLoginResponse {
        guard !name.trimmingCharacters(in: .whitespaces).isEmpty else {
            throw .invalidField(field: "name", reason: "must not be empty")
        }
        let agentId = ids.agentId()
        let token = ids.token()
        var agent = AgentRecord(id: agentId, name: name, token: token, sequence: nextSequence(), idleSince: now)
        agent.servesAccessibility = servesAccessibility
        agents[agentId] = agent
        agentIdsByToken[token] = agentId
        return AgentLoginResponse(agentId: agentId, token: token)
    }

    /// The agent is gone (logout, or its socket closed): what it was ringing for is re-routed, its
    /// call ends with AGENT_LOST, a transfer offered to it is cancelled.
    mutating func removeAgent(_ agentId: String) throws(ACDError) {
        let agent = try requireAgent(agentId)
        switch agent.activity {
        case .ringing(let rtcId):
            if let transferredRtcId = transferLegs[rtcId] {
                cancelTransfer(of: transferredRtcId, reason: .targetLost)
            } else if var record = interactions[rtcId] {
                record.phase = .queued
                interactions[rtcId] = record
            }
        case .busy(let rtcId):
            if let record = interactions[rtcId] {
                endCall(record, reason: .agentLost, withdrawReason: .cancelled)
            }
        case .idle, .afterCall:
            break
        }
        agents[agentId] = nil
        agentIdsByToken[agent.token] = nil
        route()
    }

    mutating func perform(_ command: AgentCommand, agentId: String) throws(ACDError) {
        let agent = try requireAgent(agentId)
        switch command {
        case .ready(let queues):
            let wanted = queues.isEmpty ? [configuration.defaultQueue] : queues
            for (index, queue) in wanted.enumerated() { try requireQueue(queue, field: "queues[\(index)]") }
            setAvailability(agentId, ready: true, queues: Set(wanted))
        case .notReady:
            setAvailability(agentId, ready: false, queues: nil)
        case .accept(let rtcId):
            try requireRinging(agent, rtcId: rtcId)
            if let transferredRtcId = transferLegs[rtcId] {
                completeAgentTransfer(of: transferredRtcId)
            } else {
                connect(rtcId: rtcId, agentId: agentId)
            }
        case .reject(let rtcId):
            try reject(rtcId: rtcId, agentId: agentId)
        case .hangup(let rtcId):
            let record = try requireConnected(rtcId: rtcId, agentId: agentId)
            endCall(record, reason: .agentHangup, withdrawReason: .cancelled)
        case .transfer(let rtcId, let target):
            try startTransfer(rtcId: rtcId, agentId: agentId, to: target)
        case .cancelTransfer(let rtcId):
            let record = try requireConnected(rtcId: rtcId, agentId: agentId)
            guard record.transfer != nil else { throw .invalidState("no transfer of \"\(rtcId)\" is pending") }
            cancelTransfer(of: rtcId, reason: .cancelled)
        }
    }

    /// Ready/not ready. Leaving wrap-up early is allowed; during a call the wish applies after it;
    /// going not ready while an offer rings rejects the offer.
    private mutating func setAvailability(_ agentId: String, ready: Bool, queues: Set<String>?) {
        guard var agent = agents[agentId] else { return }
        if ready, !agent.wantsReady, agent.activity == .idle {
            agent.idleSince = now  // idle time counts from becoming available
        }
        agent.wantsReady = ready
        agent.reason = nil
        if let queues { agent.queues = queues }
        if case .afterCall = agent.activity {
            agent.activity = .idle
            agent.idleSince = now
        }
        agents[agentId] = agent
        if !ready, case .ringing(let rtcId) = agent.activity {
            decline(rtcId: rtcId, agentId: agentId)
            return
        }
        emitAgentState(agentId)
        route()
    }

    private mutating func reject(rtcId: String, agentId: String) throws(ACDError) {
        try requireRinging(try requireAgent(agentId), rtcId: rtcId)
        decline(rtcId: rtcId, agentId: agentId)
    }

    /// The ringing agent said no: a transfer offer is refused; a queue call goes back to its place
    /// in the queue and is never offered to this agent again.
    private mutating func decline(rtcId: String, agentId: String) {
        if let transferredRtcId = transferLegs[rtcId] {
            cancelTransfer(of: transferredRtcId, reason: .refused)
            return
        }
        interactions[rtcId]?.phase = .queued
        interactions[rtcId]?.declinedBy.insert(agentId)
        releaseRinging(agentId: agentId)
        emitAgentState(agentId)
        route()
    }

    mutating func connect(rtcId: String, agentId: String) {
        guard var record = interactions[rtcId], let agent = agents[agentId] else { return }
        record.phase = .connected(agentId: agentId, since: now)
        interactions[rtcId] = record
        agents[agentId]?.activity = .busy(rtcId: rtcId)
        emit(.toCaller(rtcId: rtcId, .agentConnected(rtcId: rtcId, agentId: agentId, agentName: agent.name)))
        emit(.toAgent(agentId: agentId, .callConnected(rtcId: rtcId, callerName: record.callerName)))
        emitAgentState(agentId)
    }

    /// An offer rang out: Genesys' RONA. The agent goes not ready so the next call does not ring
    /// at an empty desk; the call keeps its place in the queue.
    mutating func offerTimedOut(rtcId: String, agentId: String) {
        interactions[rtcId]?.phase = .queued
        setNoAnswer(agentId)
        emit(.toAgent(agentId: agentId, .offerWithdrawn(rtcId: rtcId, reason: .timeout)))
        emitAgentState(agentId)
        route()
    }

    mutating func setNoAnswer(_ agentId: String) {
        agents[agentId]?.activity = .idle
        agents[agentId]?.wantsReady = false
        agents[agentId]?.reason = "NO_ANSWER"
    }

    mutating func afterCallEnded(agentId: String) {
        agents[agentId]?.activity = .idle
        agents[agentId]?.idleSince = now
        emitAgentState(agentId)
        route()
    }

    private func requireRinging(_ agent: AgentRecord, rtcId: String) throws(ACDError) {
        guard agent.activity == .ringing(rtcId: rtcId) else {
            throw .invalidState("no offer of \"\(rtcId)\" is ringing at agent \"\(agent.id)\"")
        }
    }

    func requireConnected(rtcId: String, agentId: String) throws(ACDError) -> InteractionRecord {
        guard let record = interactions[rtcId] else { throw .unknownRtcId(rtcId) }
        guard record.connectedAgentId == agentId else {
            throw .invalidState("call \"\(rtcId)\" is not connected to agent \"\(agentId)\"")
        }
        return record
    }
}
