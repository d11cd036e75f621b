import ECVProtocol

/// What the outside world can read: polling answers, socket greetings, queue figures.
extension ACDState {
    mutating func queueInfo(rtcId: String) -> QueueInfoResponse {
        reindex()
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

    /// 1-based place among the calls waiting in the same queue: the call's rank in the queue's
    /// index, O(log n).
    func position(of record: InteractionRecord) -> Int {
        let key = ACDIndex.WaitingKey(priority: record.priority, queuedAt: record.queuedAt ?? .infinity,
                                      sequence: record.sequence, rtcId: record.rtcId)
        return (index.queues[record.queue]?.waiting.rank(of: key) ?? 0) + 1
    }

    /// Estimated wait in whole seconds (rounded up), as a URS-style statistic: each agent working
    /// the queue becomes free at a predictable time (now if idle, when its wrap-up ends, or after
    /// the rest of an average call), and every call it then takes keeps it for one average handle
    /// time plus wrap-up. The caller at `position` gets the position-th such free slot.
    /// -1 when the queue has no agent working it or no handle time is known.
    ///
    /// Every agent is free within one cycle from now (idle: now; wrapping up: by now + wrap-up;
    /// ringing: now + cycle; busy: by now + cycle), so its k-th slot comes after every agent's
    /// (k-1)-th: the slots go round by round in the order of the first ones. The position-th slot
    /// is then the ((position - 1) mod agents)-th smallest free time plus whole cycles, whatever
    /// the queue length; that free time is selected from the queue's index (idle and ringing agents
    /// counted, wrap-up ends and call starts in order) in O(log² n), never by listing the agents.
    func estimatedWait(position: Int, queue: String) -> Double {
        guard let handleTime = averageHandleTime(queue: queue) ?? configuration.assumedHandleTime else { return -1 }
        let cycle = handleTime + configuration.afterCallWork
        guard let staff = index.queues[queue], staff.staffed > 0, position >= 1 else { return -1 }
        let (round, rank) = (position - 1).quotientAndRemainder(dividingBy: staff.staffed)
        let now = now, afterCallWork = configuration.afterCallWork
        // A busy agent is free after the rest of an average call and its wrap-up: later for a
        // later start, so the busy agents' free times are in the order of their starts.
        let busyFree = { (since: Double) in now + max(0, handleTime - (now - since)) + afterCallWork }
        let free = FreeTimes.selectSmallest(rank, of: [
            .constant(now, count: staff.available.count),
            .constant(now + cycle, count: staff.ringing),
            .ordered(staff.afterCall) { $0 },
            .ordered(staff.busy, busyFree),
        ])
        let slot = free + Double(round) * cycle
        return (slot - now).rounded(.up)
    }

    mutating func queueSummaries() -> QueuesResponse {
        reindex()
        return QueuesResponse(defaultQueue: configuration.defaultQueue, queues: configuration.queues.map { queue in
            let staff = index.queues[queue]
            return QueueSummary(
                name: queue,
                waiting: staff?.waiting.count ?? 0,
                readyAgents: staff?.available.count ?? 0,
                staffedAgents: staff?.staffed ?? 0,
                averageHandleSeconds: averageHandleTime(queue: queue))
        })
    }

    func agentGreeting(agentId: String) throws(ACDError) -> AgentEvent {
        .agentState(try requireAgent(agentId).stateUpdate)
    }
}

/// One sorted run of agents' free times for `estimatedWait`: equal times for a count of agents,
/// or agents' times in an index mapped through a non-decreasing function.
struct FreeTimes {
    let count: Int
    /// The time at 0-based place `index`.
    let time: (Int) -> Double
    /// How many times are below (`strictly`) or at most `limit`.
    let counted: (_ limit: Double, _ strictly: Bool) -> Int

    static func constant(_ time: Double, count: Int) -> FreeTimes {
        FreeTimes(count: count, time: { _ in time }, counted: { limit, strictly in
            (strictly ? time < limit : time <= limit) ? count : 0
        })
    }

    static func ordered(_ keys: OrderedIndex<ACDIndex.TimeKey>, _ free: @escaping (Double) -> Double) -> FreeTimes {
        FreeTimes(count: keys.count, time: { free(keys.select($0)!.time) }, counted: { limit, strictly in
            keys.countPrefix { strictly ? free($0.time) < limit : free($0.time) <= limit }
        })
    }

    /// The `rank`-th smallest (0-based) of all the runs' times together: the time t of some run
    /// with fewer than rank + 1 times below it and more than rank at or below it. Per run, a
    /// binary search finds its first time with more than rank at or below; O(runs² log² n).
    static func selectSmallest(_ rank: Int, of runs: [FreeTimes]) -> Double {
        func total(_ limit: Double, strictly: Bool) -> Int { runs.reduce(0) { $0 + $1.counted(limit, strictly) } }
        for run in runs where run.count > 0 {
            var low = 0, high = run.count
            while low < high {
                let middle = (low + high) / 2
                if total(run.time(middle), strictly: false) > rank { high = middle } else { low = middle + 1 }
            }
            if low < run.count, total(run.time(low), strictly: true) <= rank { return run.time(low) }
        }
        return .nan // not reached for 0 <= rank < the runs' total
    }
}
