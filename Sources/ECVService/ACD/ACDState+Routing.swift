import ECVProtocol

extension ACDState {
    /// Offers every queued call, in queue order, to the longest-idle available agent working its
    /// queue that has not declined it. One pass suffices: an offer only removes an agent.
    ///
    /// Runs after every change, so its cost must not grow with the queue or the staff: it walks
    /// only the queues that have a free agent, each from its first waiting call (the index keeps
    /// both in order), merged in queue order, and stops when the free agents are used up. A call
    /// is passed over only when every free agent of its queue declined it, so the walk is as long
    /// as the offers made plus such declines (Benchmarks/ACDRouting measures it).
    mutating func route() {
        guard !isShutDown else { return }
        reindex()
        // Each queue with a free agent, with its next waiting call.
        var heads: [(queue: String, call: ACDIndex.WaitingKey)] = []
        for (queue, entry) in index.queues where !entry.available.isEmpty {
            if let first = entry.waiting.first { heads.append((queue, first)) }
        }
        while let best = heads.indices.min(by: { heads[$0].call < heads[$1].call }) {
            let (queue, call) = heads[best]
            if let record = interactions[call.rtcId], let agentId = firstAvailableAgent(in: queue, for: record) {
                offer(record, to: agentId)
                reindex()
            }
            if let next = index.queues[queue]?.waiting.successor(of: call) {
                heads[best].call = next
            } else {
                heads.remove(at: best)
            }
            // A queue whose last free agent was just offered a call has nothing more to give.
            heads.removeAll { index.queues[$0.queue]?.available.isEmpty ?? true }
        }
    }

    /// The longest-idle free agent of `queue` who has not declined `record`; for a caller flagged
    /// hearing or visually impaired, the longest-idle such agent who serves accessibility first,
    /// when there is one (that walk is as long as the queue's free agents).
    private func firstAvailableAgent(in queue: String, for record: InteractionRecord) -> String? {
        guard let available = index.queues[queue]?.available else { return nil }
        if Self.isImpaired(record) {
            var candidate = available.first
            while let agent = candidate {
                if agents[agent.agentId]?.servesAccessibility == true, !record.declinedBy.contains(agent.agentId) { return agent.agentId }
                candidate = available.successor(of: agent)
            }
        }
        var candidate = available.first
        while let agent = candidate {
            if !record.declinedBy.contains(agent.agentId) { return agent.agentId }
            candidate = available.successor(of: agent)
        }
        return nil
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

    /// The next timed transition: the top of the deadline heap, once entries whose deadline is
    /// gone from the state are dropped. O(log n) per dropped entry, each dropped once.
    mutating func nextDeadline() -> ACDIndex.Timed? {
        reindex()
        while let top = index.deadlines.first {
            if isScheduled(top) { return top }
            index.deadlines.removeFirst()
        }
        return nil
    }

    /// Fires everything due up to `target` in time order, each at its own time.
    mutating func advance(to target: Double) {
        while let next = nextDeadline(), next.time <= target {
            index.deadlines.removeFirst()
            now = max(now, next.time)
            fire(next.deadline)
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
