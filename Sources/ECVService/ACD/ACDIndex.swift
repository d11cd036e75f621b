import GLibCore

/// What the ACD derives from its records so that no request scans every call or agent: each
/// queue's waiting calls in routing order, its free agents in idle order, the times its agents
/// become free, and every timed transition in one heap. Rebuilt per record from the keys the
/// tables report as written (`ACDState.reindex()`), so it cannot drift from the records,
/// whichever code path changed them.
struct ACDIndex {
    /// Routing order of a queued call: higher priority first, then earlier entry into the ACD,
    /// then earlier dial.
    struct WaitingKey: Comparable {
        let priority: Int
        let queuedAt: Double
        let sequence: Int
        let rtcId: String

        static func < (lhs: WaitingKey, rhs: WaitingKey) -> Bool {
            if lhs.priority != rhs.priority { return lhs.priority > rhs.priority }
            if lhs.queuedAt != rhs.queuedAt { return lhs.queuedAt < rhs.queuedAt }
            return lhs.sequence < rhs.sequence
        }
    }

    /// Idle order of a free agent: longest idle first, then earlier login.
    struct IdleKey: Comparable {
        let idleSince: Double
        let sequence: Int
        let agentId: String

        static func < (lhs: IdleKey, rhs: IdleKey) -> Bool {
            (lhs.idleSince, lhs.sequence) < (rhs.idleSince, rhs.sequence)
        }
    }

    /// A time of one agent (when its wrap-up ends, when its call started), agents apart by login.
    struct TimeKey: Comparable {
        let time: Double
        let sequence: Int

        static func < (lhs: TimeKey, rhs: TimeKey) -> Bool { (lhs.time, lhs.sequence) < (rhs.time, rhs.sequence) }
    }

    /// A timed transition. Ties fire in the order of `ACDState.Deadline`'s cases, then by id.
    struct Timed: Comparable {
        let time: Double
        let deadline: ACDState.Deadline

        static func < (lhs: Timed, rhs: Timed) -> Bool { (lhs.time, lhs.deadline) < (rhs.time, rhs.deadline) }
    }

    /// One queue: its waiting calls and the agents working it who want calls (`wantsReady`).
    struct Queue {
        var waiting = OrderedIndex<WaitingKey>()
        /// Idle and ready: offered the next call, longest idle first.
        var available = OrderedIndex<IdleKey>()
        var ringing = 0
        /// Ready agents in wrap-up, by when it ends.
        var afterCall = OrderedIndex<TimeKey>()
        /// Ready agents on a call, by when it started.
        var busy = OrderedIndex<TimeKey>()

        var staffed: Int { available.count + ringing + afterCall.count + busy.count }
    }

    /// What one call contributes, as last indexed.
    struct CallEntry: Equatable {
        let queue: String
        let waiting: WaitingKey?
        let deadlines: [Timed]
    }

    /// What one agent contributes, as last indexed.
    struct AgentEntry: Equatable {
        enum Staffing: Equatable {
            case idle, ringing
            case afterCall(TimeKey)
            case busy(TimeKey)
        }

        let queues: Set<String>
        let available: IdleKey?
        /// nil while the agent does not want calls.
        let staffing: Staffing?
        let deadline: Timed?
    }

    var queues: [String: Queue] = [:]
    var deadlines = MinHeap<Timed>()
    var calls: [String: CallEntry] = [:]
    var agents: [String: AgentEntry] = [:]
    /// Deadlines the entries of `calls` and `agents` hold (the heap also holds stale ones).
    var scheduled = 0
}

extension ACDState {
    /// Brings the index up to date with every record written since the last call: O(log n) per
    /// written record. Every reader of the index calls it first.
    mutating func reindex() {
        for rtcId in interactions.takeTouched() { reindexCall(rtcId) }
        for agentId in agents.takeTouched() { reindexAgent(agentId) }
        for rtcId in ended.takeTouched() {
            if let record = ended[rtcId] { index.deadlines.insert(.init(time: record.forgetAt, deadline: .forgetEnded(rtcId: rtcId))) }
        }
        for rtcId in issued.takeTouched() {
            if let expiry = issued[rtcId] { index.deadlines.insert(.init(time: expiry, deadline: .forgetIssued(rtcId: rtcId))) }
        }
        // Stale heap entries are dropped as they surface; when they outnumber the live ones, the
        // heap is rebuilt from the entries (O(n), at most once per n changes).
        let live = index.scheduled + ended.count + issued.count
        if index.deadlines.count > 2 * live + 1024 { rebuildDeadlines() }
    }

    /// Rebuilds the whole index from the records (after a reconfiguration: the queue timeout
    /// may have changed for every queued call).
    mutating func rebuildIndex() {
        interactions.clearTouched()
        agents.clearTouched()
        ended.clearTouched()
        issued.clearTouched()
        index = ACDIndex()
        for rtcId in interactions.keys { reindexCall(rtcId) }
        for agentId in agents.keys { reindexAgent(agentId) }
        rebuildDeadlines()
    }

    private mutating func rebuildDeadlines() {
        var live: [ACDIndex.Timed] = []
        live.reserveCapacity(index.scheduled + ended.count + issued.count)
        for entry in index.calls.values { live += entry.deadlines }
        for entry in index.agents.values { if let deadline = entry.deadline { live.append(deadline) } }
        for (rtcId, record) in ended { live.append(.init(time: record.forgetAt, deadline: .forgetEnded(rtcId: rtcId))) }
        for (rtcId, expiry) in issued { live.append(.init(time: expiry, deadline: .forgetIssued(rtcId: rtcId))) }
        index.deadlines.rebuild(live)
    }

    /// Whether a heap entry is still one of the state's deadlines (the index is up to date).
    func isScheduled(_ entry: ACDIndex.Timed) -> Bool {
        switch entry.deadline {
        case .queueEntry(let rtcId), .offerExpiry(let rtcId, _), .transferOfferExpiry(let rtcId), .queueTimeout(let rtcId):
            index.calls[rtcId]?.deadlines.contains(entry) == true
        case .afterCallEnd(let agentId):
            index.agents[agentId]?.deadline == entry
        case .forgetEnded(let rtcId):
            ended[rtcId]?.forgetAt == entry.time
        case .forgetIssued(let rtcId):
            issued[rtcId] == entry.time
        }
    }

    /// The deadlines of a live call.
    func deadlines(of record: InteractionRecord) -> [ACDIndex.Timed] {
        var result: [ACDIndex.Timed] = []
        switch record.phase {
        case .entering(let until):
            result.append(.init(time: until, deadline: .queueEntry(rtcId: record.rtcId)))
        case .offered(let agentId, let until):
            result.append(.init(time: until, deadline: .offerExpiry(rtcId: record.rtcId, agentId: agentId)))
        case .queued:
            if let maxWait = configuration.maxQueueWait, let queuedAt = record.queuedAt {
                result.append(.init(time: queuedAt + maxWait, deadline: .queueTimeout(rtcId: record.rtcId)))
            }
        case .connected:
            break
        }
        if let transfer = record.transfer {
            result.append(.init(time: transfer.until, deadline: .transferOfferExpiry(rtcId: record.rtcId)))
        }
        return result
    }

    private mutating func reindexCall(_ rtcId: String) {
        let old = index.calls[rtcId]
        let new = interactions[rtcId].map { record in
            ACDIndex.CallEntry(
                queue: record.queue,
                waiting: record.phase == .queued
                    ? ACDIndex.WaitingKey(priority: record.priority, queuedAt: record.queuedAt ?? .infinity,
                                          sequence: record.sequence, rtcId: rtcId)
                    : nil,
                deadlines: deadlines(of: record))
        }
        guard old != new else { return }
        if old?.queue != new?.queue || old?.waiting != new?.waiting {
            if let old, let key = old.waiting { index.queues[old.queue]?.waiting.remove(key) }
            if let new, let key = new.waiting { index.queues[new.queue, default: ACDIndex.Queue()].waiting.insert(key) }
        }
        for deadline in new?.deadlines ?? [] where !(old?.deadlines.contains(deadline) ?? false) {
            index.deadlines.insert(deadline)
        }
        index.scheduled += (new?.deadlines.count ?? 0) - (old?.deadlines.count ?? 0)
        index.calls[rtcId] = new
    }

    private mutating func reindexAgent(_ agentId: String) {
        let old = index.agents[agentId]
        let new = agents[agentId].map { agent -> ACDIndex.AgentEntry in
            var staffing: ACDIndex.AgentEntry.Staffing?
            var deadline: ACDIndex.Timed?
            switch agent.activity {
            case .idle:
                staffing = .idle
            case .ringing:
                staffing = .ringing
            case .afterCall(let until):
                staffing = .afterCall(ACDIndex.TimeKey(time: until, sequence: agent.sequence))
                deadline = ACDIndex.Timed(time: until, deadline: .afterCallEnd(agentId: agentId))
            case .busy(let rtcId):
                var since = now
                if case .connected(_, let start)? = interactions[rtcId]?.phase { since = start }
                staffing = .busy(ACDIndex.TimeKey(time: since, sequence: agent.sequence))
            }
            return ACDIndex.AgentEntry(
                queues: agent.queues,
                available: agent.isAvailable ? ACDIndex.IdleKey(idleSince: agent.idleSince, sequence: agent.sequence, agentId: agentId) : nil,
                staffing: agent.wantsReady ? staffing : nil,
                deadline: deadline)
        }
        guard old != new else { return }
        if let old { contribute(old, sign: -1) }
        if let new { contribute(new, sign: 1) }
        if let deadline = new?.deadline, deadline != old?.deadline { index.deadlines.insert(deadline) }
        index.scheduled += (new?.deadline == nil ? 0 : 1) - (old?.deadline == nil ? 0 : 1)
        index.agents[agentId] = new
    }

    /// Adds (`sign` 1) or removes (-1) an agent from the queues it works.
    private mutating func contribute(_ entry: ACDIndex.AgentEntry, sign: Int) {
        for queue in entry.queues {
            var indexed = index.queues.removeValue(forKey: queue) ?? ACDIndex.Queue()
            if let key = entry.available {
                if sign > 0 { indexed.available.insert(key) } else { indexed.available.remove(key) }
            }
            switch entry.staffing {
            case .ringing?: indexed.ringing += sign
            case .afterCall(let key)?:
                if sign > 0 { indexed.afterCall.insert(key) } else { indexed.afterCall.remove(key) }
            case .busy(let key)?:
                if sign > 0 { indexed.busy.insert(key) } else { indexed.busy.remove(key) }
            case .idle?, nil: break
            }
            index.queues[queue] = indexed
        }
    }
}
