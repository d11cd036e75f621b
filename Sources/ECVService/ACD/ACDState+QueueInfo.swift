import ECVProtocol

/// What the outside world can read: polling answers, socket greetings, queue figures.
extension ACDState {
    func queueInfo(rtcId: String) -> QueueInfoResponse {
        let none = QueueInfoResponse(rtcId: rtcId, state: .notFound, position: -1, ewtSeconds: -1)
        if let record = interactions[rtcId] {
            switch record.phase {
            case .entering, .offered:
                return QueueInfoResponse(rtcId: rtcId, state: .wait, position: -1, ewtSeconds: -1)
            case .queued:
                let position = position(of: record)
                return QueueInfoResponse(rtcId: rtcId, state: .wait, position: position,
                                         ewtSeconds: estimatedWait(position: position, queue: record.queue))
            case .connected:
                return QueueInfoResponse(rtcId: rtcId, state: record.transfer == nil ? .agentConnected : .transferPending,
                                         position: -1, ewtSeconds: -1)
            }
        }
        switch ended[rtcId]?.outcome {
        case .ended(let reason):
            return QueueInfoResponse(rtcId: rtcId, state: .ended, position: -1, ewtSeconds: -1, reason: reason)
        case .transferred(let newRtcId):
            return QueueInfoResponse(rtcId: rtcId, state: .transferred, position: -1, ewtSeconds: -1, newRtcId: newRtcId)
        case nil:
            return none
        }
    }

    /// What a queue socket receives the moment it opens: the current state, so a push that
    /// happened before the socket existed is never lost.
    func queueSocketGreeting(rtcId: String) -> [QueueSocketMessage] {
        if let record = interactions[rtcId] {
            switch record.phase {
            case .entering, .queued, .offered:
                return [.waiting(rtcId: rtcId, queue: record.queue)]
            case .connected(let agentId, _):
                var greeting: [QueueSocketMessage] = [
                    .agentConnected(rtcId: rtcId, agentId: agentId, agentName: agents[agentId]?.name ?? agentId),
                ]
                if let transfer = record.transfer {
                    greeting.append(.transferPending(rtcId: rtcId, target: .agent(transfer.targetAgentId)))
                }
                return greeting
            }
        }
        switch ended[rtcId]?.outcome {
        case .ended(let reason): return [.callEnded(rtcId: rtcId, reason: reason)]
        case .transferred(let newRtcId): return [.transferCompleted(rtcId: rtcId, newRtcId: newRtcId)]
        case nil: return [.error(code: .unknownRtcId, message: "no call with rtcId \"\(rtcId)\"")]
        }
    }

    /// 1-based place among the calls waiting in the same queue.
    func position(of record: InteractionRecord) -> Int {
        var ahead = 0
        for other in interactions.values where other.phase == .queued && other.queue == record.queue
            && Self.servedBefore(other, record) {
            ahead += 1
        }
        return ahead + 1
    }

    /// Estimated wait in whole seconds (rounded up), as a URS-style statistic: each agent working
    /// the queue becomes free at a predictable time (now if idle, when its wrap-up ends, or after
    /// the rest of an average call), and every call it then takes keeps it for one average handle
    /// time plus wrap-up. The caller at `position` gets the position-th such free slot.
    /// -1 when the queue has no agent working it or no handle time is known.
    func estimatedWait(position: Int, queue: String) -> Double {
        guard let handleTime = averageHandleTime(queue: queue) ?? configuration.assumedHandleTime else { return -1 }
        let cycle = handleTime + configuration.afterCallWork
        var freeAt: [Double] = []
        for agent in agents.values where agent.wantsReady && agent.queues.contains(queue) {
            switch agent.activity {
            case .idle:
                freeAt.append(now)
            case .afterCall(let until):
                freeAt.append(until)
            case .ringing:
                freeAt.append(now + cycle)
            case .busy(let rtcId):
                var since = now
                if case .connected(_, let start)? = interactions[rtcId]?.phase { since = start }
                freeAt.append(now + max(0, handleTime - (now - since)) + configuration.afterCallWork)
            }
        }
        guard !freeAt.isEmpty, position >= 1 else { return -1 }
        // Every agent is free within one cycle from now (idle: now; wrapping up: by now + wrap-up;
        // ringing: now + cycle; busy: by now + cycle), so its k-th slot comes after every agent's
        // (k-1)-th: the slots go round by round in the order of the first ones. The position-th
        // slot is then direct, whatever the queue length (no walk through the slots).
        freeAt.sort()
        let (round, index) = (position - 1).quotientAndRemainder(dividingBy: freeAt.count)
        let slot = freeAt[index] + Double(round) * cycle
        return (slot - now).rounded(.up)
    }

    func queueSummaries() -> QueuesResponse {
        QueuesResponse(defaultQueue: configuration.defaultQueue, queues: configuration.queues.map { queue in
            let working = agents.values.filter { $0.queues.contains(queue) && $0.wantsReady }
            return QueueSummary(
                name: queue,
                waiting: interactions.values.filter { $0.queue == queue && $0.phase == .queued }.count,
                readyAgents: working.filter { $0.activity == .idle }.count,
                staffedAgents: working.count,
                averageHandleSeconds: averageHandleTime(queue: queue))
        })
    }

    func agentGreeting(agentId: String) throws(ACDError) -> AgentEvent {
        .agentState(try requireAgent(agentId).stateUpdate)
    }
}
