import ECVProtocol

extension ACDState {
    /// Queue order: higher priority first, then earlier entry into the ACD, then earlier dial.
    static func servedBefore(_ lhs: InteractionRecord, _ rhs: InteractionRecord) -> Bool {
        if lhs.priority != rhs.priority { return lhs.priority > rhs.priority }
        let lhsQueued = lhs.queuedAt ?? .infinity
        let rhsQueued = rhs.queuedAt ?? .infinity
        if lhsQueued != rhsQueued { return lhsQueued < rhsQueued }
        return lhs.sequence < rhs.sequence
    }

    /// Offers every queued call, in queue order, to the longest-idle available agent working its
    /// queue that has not declined it. One pass suffices: an offer only removes an agent.
    ///
    /// Runs after every change, so its cost must not grow with the queue when nobody can take a
    /// call: with no available agent it returns at once, and otherwise it orders only the calls
    /// of queues an available agent works, and stops when the available agents are used up
    /// (Benchmarks/ACDRouting measures it).
    mutating func route() {
        guard !isShutDown else { return }
        var available = agents.values.filter(\.isAvailable)
            .sorted { ($0.idleSince, $0.sequence) < ($1.idleSince, $1.sequence) }
        guard !available.isEmpty else { return }
        let servable = Set(available.flatMap(\.queues))
        let waiting = interactions.values.filter { $0.phase == .queued && servable.contains($0.queue) }
            .sorted(by: Self.servedBefore)
        for record in waiting {
            guard !available.isEmpty else { return }
            // `available` is in idle order: the first match is the longest-idle one.
            guard let index = available.firstIndex(where: {
                $0.queues.contains(record.queue) && !record.declinedBy.contains($0.id)
            }) else { continue }
            offer(record, to: available.remove(at: index).id)
        }
    }

    private mutating func offer(_ record: InteractionRecord, to agentId: String) {
        interactions[record.rtcId]?.phase = .offered(agentId: agentId, until: now + configuration.offerTimeout)
        agents[agentId]?.activity = .ringing(rtcId: record.rtcId)
        emit(.toAgent(agentId: agentId, .offer(CallOffer(
            rtcId: record.rtcId, interactionId: record.interactionId, callerName: record.callerName,
            queue: record.queue, attributes: record.attributes, acdAttributes: record.acdAttributes,
            customPayload: record.customPayload, priority: record.priority,
            timeoutSeconds: configuration.offerTimeout))))
        emitAgentState(agentId)
    }

    // MARK: - Time

    /// Something due at a time. Ties fire in the order of the cases, then by id, so a run is
    /// reproducible however late the clock is read.
    enum Deadline: Comparable {
        case queueEntry(rtcId: String)
        case offerExpiry(rtcId: String, agentId: String)
        case transferOfferExpiry(rtcId: String)
        case afterCallEnd(agentId: String)
        case queueTimeout(rtcId: String)
        case forgetEnded(rtcId: String)
        case forgetIssued(rtcId: String)
    }

    func nextDeadline() -> (time: Double, deadline: Deadline)? {
        var best: (time: Double, deadline: Deadline)?
        func consider(_ time: Double, _ deadline: Deadline) {
            if let current = best, (current.time, current.deadline) <= (time, deadline) { return }
            best = (time, deadline)
        }
        for record in interactions.values {
            switch record.phase {
            case .entering(let until): consider(until, .queueEntry(rtcId: record.rtcId))
            case .offered(let agentId, let until): consider(until, .offerExpiry(rtcId: record.rtcId, agentId: agentId))
            case .queued:
                if let maxWait = configuration.maxQueueWait, let queuedAt = record.queuedAt {
                    consider(queuedAt + maxWait, .queueTimeout(rtcId: record.rtcId))
                }
            case .connected: break
            }
            if let transfer = record.transfer { consider(transfer.until, .transferOfferExpiry(rtcId: record.rtcId)) }
        }
        for agent in agents.values {
            if case .afterCall(let until) = agent.activity { consider(until, .afterCallEnd(agentId: agent.id)) }
        }
        for (rtcId, record) in ended { consider(record.forgetAt, .forgetEnded(rtcId: rtcId)) }
        for (rtcId, expiry) in issued { consider(expiry, .forgetIssued(rtcId: rtcId)) }
        return best
    }

    /// Fires everything due up to `target` in time order, each at its own time.
    mutating func advance(to target: Double) {
        while let (time, deadline) = nextDeadline(), time <= target {
            now = max(now, time)
            fire(deadline)
        }
        now = max(now, target)
    }

    private mutating func fire(_ deadline: Deadline) {
        switch deadline {
        case .queueEntry(let rtcId):
            guard var record = interactions[rtcId] else { return }
            record.phase = .queued
            record.queuedAt = now
            interactions[rtcId] = record
            route()
        case .offerExpiry(let rtcId, let agentId):
            offerTimedOut(rtcId: rtcId, agentId: agentId)
        case .transferOfferExpiry(let rtcId):
            cancelTransfer(of: rtcId, reason: .timeout)
        case .afterCallEnd(let agentId):
            afterCallEnded(agentId: agentId)
        case .queueTimeout(let rtcId):
            guard let record = interactions[rtcId] else { return }
            endCall(record, reason: .queueTimeout, withdrawReason: .callerHangup)
        case .forgetEnded(let rtcId):
            ended[rtcId] = nil
        case .forgetIssued(let rtcId):
            issued[rtcId] = nil
        }
    }

    /// Ends every call (the service is stopping). Agents stay logged in, idle.
    mutating func shutDown() {
        isShutDown = true
        for record in interactions.values.sorted(by: { $0.sequence < $1.sequence }) {
            guard let current = interactions[record.rtcId] else { continue }
            endCall(current, reason: .serviceShutdown, withdrawReason: .cancelled)
        }
    }
}
