import ECVProtocol
@testable import ECVService
import GLibCore
import GStreamer
import Testing

/// The ACD's derived index (ordered queues, free agents, free times, the deadline heap) against
/// plain scans of the records: random workloads, checked after every operation.
@Suite("ACD index")
struct ACDIndexTests {
    /// A fixed-seed generator, so a failure replays.
    struct Generator: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var value = state
            value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
            value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
            return value ^ (value >> 31)
        }
    }

    @Test func orderedIndexAgreesWithASortedArray() {
        var random = Generator(state: 1)
        var index = OrderedIndex<Int>()
        var model: [Int] = []
        for step in 0..<6_000 {
            let key = Int.random(in: 0..<2_000, using: &random)
            if Bool.random(using: &random) {
                let inserted = index.insert(key)
                #expect(inserted == !model.contains(key))
                if inserted { model.insert(key, at: model.firstIndex { $0 > key } ?? model.count) }
            } else {
                let removed = index.remove(key)
                #expect(removed == model.contains(key))
                model.removeAll { $0 == key }
            }
            guard step % 97 == 0 else { continue }
            #expect(index.count == model.count)
            #expect(index.first == model.first)
            #expect(index.rank(of: key) == model.filter { $0 < key }.count)
            #expect(index.successor(of: key) == model.first { $0 > key })
            let place = model.isEmpty ? 0 : Int.random(in: 0..<model.count, using: &random)
            #expect(index.select(place) == (model.isEmpty ? nil : model[place]))
            #expect(index.countPrefix { $0 <= key } == model.filter { $0 <= key }.count)
            #expect(index.contains(key) == model.contains(key))
        }
        #expect(index.sorted == model)
    }

    @Test func deadlineHeapYieldsItsElementsInOrder() {
        var random = Generator(state: 2)
        var heap = MinHeap<Int>()
        var model: [Int] = []
        for _ in 0..<2_000 {
            if Int.random(in: 0..<3, using: &random) > 0 {
                let value = Int.random(in: 0..<1_000, using: &random)
                heap.insert(value)
                model.append(value)
            } else {
                model.sort()
                #expect(heap.removeFirst() == (model.isEmpty ? nil : model.removeFirst()))
            }
            #expect(heap.first == model.min())
        }
        heap.rebuild([5, 3, 9, 1, 1, 7])
        var drained: [Int] = []
        while let value = heap.removeFirst() { drained.append(value) }
        #expect(drained == [1, 1, 3, 5, 7, 9])
    }

    @Test(arguments: [
        ACDConfiguration(queues: ["default", "Billing"], offerTimeout: 5, afterCallWork: 0, queueEntryDelay: 0),
        ACDConfiguration(queues: ["default", "Billing", "Sales"], offerTimeout: 3, afterCallWork: 4, queueEntryDelay: 1,
                         maxQueueWait: 40, endedCallRetention: 10, issuedRtcIdLifetime: 30),
        ACDConfiguration(queues: ["default"], offerTimeout: 7, afterCallWork: 2, queueEntryDelay: 0.5, maxQueueWait: 25,
                         assumedHandleTime: nil, handleTimeSamples: 3, endedCallRetention: 0),
    ])
    func randomWorkloadsAnswerAsScansWould(_ configuration: ACDConfiguration) throws {
        var configuration = configuration
        configuration.identifiers = .sequential
        var random = Generator(state: UInt64(configuration.queues.count) &* 7919)
        var state = ACDState(configuration: try configuration.validated(), now: 0)
        var issued: [String] = []
        for step in 0..<700 {
            Self.randomOperation(on: &state, issued: &issued, using: &random)
            state.outbox.removeAll()
            try Self.checkAgainstScans(&state, step: step)
        }
        // A reconfiguration rebuilds the index: the queue timeout changes for every queued call.
        state.configuration.maxQueueWait = 1_000
        state.rebuildIndex()
        state.route()
        try Self.checkAgainstScans(&state, step: -1)
    }

    static func randomOperation(on state: inout ACDState, issued: inout [String], using random: inout Generator) {
        let queues = state.configuration.queues
        let agentIds = state.agents.keys.sorted()
        let rtcIds = state.interactions.keys.sorted()
        func anyAgent() -> String? { agentIds.randomElement(using: &random) }
        func anyCall() -> String? { rtcIds.randomElement(using: &random) }
        switch Int.random(in: 0..<100, using: &random) {
        case 0..<18 where state.interactions.count < 40:
            let rtcId = issued.popLast() ?? state.issueRtcId()
            let priority = ["0", "0", "3", "-2", "10"].randomElement(using: &random)!
            _ = try? state.dial(DialExRequest(rtcId: rtcId, callerName: "C", queue: queues.randomElement(using: &random),
                                              acdAttributes: ["priority": priority]))
        case 18..<22:
            issued.append(state.issueRtcId())
        case 22..<28 where state.agents.count < 12:
            _ = try? state.login(name: "A")
        case 28..<40:
            guard let agentId = anyAgent() else { return }
            let count = Int.random(in: 1...2, using: &random)
            try? state.perform(.ready(queues: Array(queues.shuffled(using: &random).prefix(count))), agentId: agentId)
        case 40..<44:
            guard let agentId = anyAgent() else { return }
            try? state.perform(.notReady, agentId: agentId)
        case 44..<60:
            // Accept or reject what rings.
            for agentId in agentIds {
                guard case .ringing(let rtcId) = state.agents[agentId]?.activity else { continue }
                if Int.random(in: 0..<4, using: &random) == 0 {
                    try? state.perform(.reject(rtcId: rtcId), agentId: agentId)
                } else {
                    try? state.perform(.accept(rtcId: rtcId), agentId: agentId)
                }
                return
            }
        case 60..<68:
            guard let rtcId = anyCall(), let agentId = state.interactions[rtcId]?.connectedAgentId else { return }
            try? state.perform(.hangup(rtcId: rtcId), agentId: agentId)
        case 68..<72:
            guard let rtcId = anyCall(), let agentId = state.interactions[rtcId]?.connectedAgentId else { return }
            let target: TransferTarget = Bool.random(using: &random)
                ? .queue(queues.randomElement(using: &random)!) : .agent(anyAgent() ?? agentId)
            try? state.startTransfer(rtcId: rtcId, agentId: agentId, to: target)
        case 72..<74:
            guard let rtcId = anyCall(), let agentId = state.interactions[rtcId]?.connectedAgentId else { return }
            try? state.perform(.cancelTransfer(rtcId: rtcId), agentId: agentId)
        case 74..<80:
            guard let rtcId = anyCall() else { return }
            try? state.callerHangUp(rtcId: rtcId)
        case 80..<82:
            guard let agentId = anyAgent() else { return }
            try? state.removeAgent(agentId)
        default:
            state.advance(to: state.now + Double(Int.random(in: 0...8, using: &random)) / 2)
        }
    }

    /// Every answer the index gives, recomputed by scanning the records as the ACD did before it
    /// had an index.
    static func checkAgainstScans(_ state: inout ACDState, step: Int) throws {
        var wrong: [String] = []
        let next = state.nextDeadline()
        let scanned = referenceNextDeadline(state)
        if next?.time != scanned?.time || next?.deadline != scanned?.deadline { wrong.append("next deadline \(String(describing: next))") }
        for summary in state.queueSummaries().queues {
            let working = state.agents.values.filter { $0.queues.contains(summary.name) && $0.wantsReady }
            if summary.waiting != state.interactions.values.filter({ $0.queue == summary.name && $0.phase == .queued }).count
                || summary.readyAgents != working.filter({ $0.activity == .idle }).count || summary.staffedAgents != working.count {
                wrong.append("summary of \(summary.name)")
            }
        }
        for record in state.interactions.values where record.phase == .queued {
            let position = state.position(of: record)
            let ahead = state.interactions.values.filter {
                $0.phase == .queued && $0.queue == record.queue && servedBefore($0, record)
            }.count
            if position != ahead + 1 { wrong.append("position of \(record.rtcId)") }
            for probe in [position, position + 3, position + 17] {
                let indexed = state.estimatedWait(position: probe, queue: record.queue)
                let reference = referenceEstimatedWait(state, position: probe, queue: record.queue)
                if indexed != reference { wrong.append("EWT at \(probe) in \(record.queue): \(indexed), not \(reference)") }
            }
            // Routing left nothing a free agent could take.
            if !state.isShutDown, let taker = state.agents.values.first(where: {
                $0.isAvailable && $0.queues.contains(record.queue) && !record.declinedBy.contains($0.id)
            }) {
                wrong.append("\(record.rtcId) waits while \(taker.id) is free")
            }
        }
        if state.index.deadlines.count > 2 * (state.index.scheduled + state.ended.count + state.issued.count) + 1024 + 16 {
            wrong.append("stale deadlines are not compacted")
        }
        #expect(wrong.isEmpty, "step \(step): \(wrong.prefix(5))")
    }

    static func servedBefore(_ lhs: InteractionRecord, _ rhs: InteractionRecord) -> Bool {
        if lhs.priority != rhs.priority { return lhs.priority > rhs.priority }
        let lhsQueued = lhs.queuedAt ?? .infinity
        let rhsQueued = rhs.queuedAt ?? .infinity
        if lhsQueued != rhsQueued { return lhsQueued < rhsQueued }
        return lhs.sequence < rhs.sequence
    }

    /// The ACD's deadline scan before the heap.
    static func referenceNextDeadline(_ state: ACDState) -> (time: Double, deadline: ACDState.Deadline)? {
        var best: (time: Double, deadline: ACDState.Deadline)?
        func consider(_ time: Double, _ deadline: ACDState.Deadline) {
            if let current = best, (current.time, current.deadline) <= (time, deadline) { return }
            best = (time, deadline)
        }
        for record in state.interactions.values {
            switch record.phase {
            case .entering(let until): consider(until, .queueEntry(rtcId: record.rtcId))
            case .offered(let agentId, let until): consider(until, .offerExpiry(rtcId: record.rtcId, agentId: agentId))
            case .queued:
                if let maxWait = state.configuration.maxQueueWait, let queuedAt = record.queuedAt {
                    consider(queuedAt + maxWait, .queueTimeout(rtcId: record.rtcId))
                }
            case .connected: break
            }
            if let transfer = record.transfer { consider(transfer.until, .transferOfferExpiry(rtcId: record.rtcId)) }
        }
        for agent in state.agents.values {
            if case .afterCall(let until) = agent.activity { consider(until, .afterCallEnd(agentId: agent.id)) }
        }
        for (rtcId, record) in state.ended { consider(record.forgetAt, .forgetEnded(rtcId: rtcId)) }
        for (rtcId, expiry) in state.issued { consider(expiry, .forgetIssued(rtcId: rtcId)) }
        return best
    }

    /// The ACD's estimated wait before the index: every agent's free time, sorted.
    static func referenceEstimatedWait(_ state: ACDState, position: Int, queue: String) -> Double {
        guard let handleTime = state.averageHandleTime(queue: queue) ?? state.configuration.assumedHandleTime else { return -1 }
        let now = state.now
        let cycle = handleTime + state.configuration.afterCallWork
        var freeAt: [Double] = []
        for agent in state.agents.values where agent.wantsReady && agent.queues.contains(queue) {
            switch agent.activity {
            case .idle: freeAt.append(now)
            case .afterCall(let until): freeAt.append(until)
            case .ringing: freeAt.append(now + cycle)
            case .busy(let rtcId):
                var since = now
                if case .connected(_, let start)? = state.interactions[rtcId]?.phase { since = start }
                freeAt.append(now + max(0, handleTime - (now - since)) + state.configuration.afterCallWork)
            }
        }
        guard !freeAt.isEmpty, position >= 1 else { return -1 }
        freeAt.sort()
        let (round, index) = (position - 1).quotientAndRemainder(dividingBy: freeAt.count)
        return (freeAt[index] + Double(round) * cycle - now).rounded(.up)
    }
}
