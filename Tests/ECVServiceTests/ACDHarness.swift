import ECVProtocol
import ECVService
import Synchronization
import Testing

/// An engine on a manual clock with sequential ids, recording every event it emits.
final class ACDHarness: Sendable {
    let clock = ManualACDClock()
    let engine: ACDEngine
    private let recorded = ACDEventLog()

    init(_ configuration: ACDConfiguration = ACDConfiguration()) throws {
        var configuration = configuration
        configuration.identifiers = .sequential
        let recorded = recorded
        engine = try ACDEngine(configuration: configuration, clock: clock) { event in recorded.append(event) }
    }

    /// Everything emitted since the last call.
    func takeEvents() -> [ACDEvent] { recorded.take() }

    func advance(by seconds: Double) {
        clock.advance(by: seconds)
        engine.tick()
    }

    func advance(to time: Double) {
        advance(by: time - clock.now())
    }

    @discardableResult
    func dial(_ name: String, queue: String? = nil, acd: [String: String] = [:],
              attributes: [String: String] = [:]) throws -> String {
        let rtcId = engine.issueRtcId()
        _ = try engine.dial(DialExRequest(rtcId: rtcId, callerName: name, attributes: attributes, queue: queue,
                                          acdAttributes: acd))
        return rtcId
    }

    /// Logs an agent in and makes it ready on `queues`.
    func agent(_ name: String, queues: [String] = ["default"]) throws -> String {
        let agentId = try engine.login(name: name).agentId
        try engine.perform(.ready(queues: queues), agentId: agentId)
        return agentId
    }

    func info(_ rtcId: String) -> QueueInfoResponse { engine.queueInfo(rtcId: rtcId) }

    /// The rtcIds offered to `agentId` among `events`, in order.
    static func offers(to agentId: String, in events: [ACDEvent]) -> [String] {
        events.compactMap {
            if case .toAgent(agentId, .offer(let offer)) = $0 { return offer.rtcId }
            return nil
        }
    }

    /// Queue-socket pushes for `rtcId` among `events`.
    static func pushes(to rtcId: String, in events: [ACDEvent]) -> [QueueSocketMessage] {
        events.compactMap {
            if case .toCaller(rtcId, let message) = $0 { return message }
            return nil
        }
    }

    /// Agent events for `agentId` among `events`, without the `agent_state` updates.
    static func agentEvents(_ agentId: String, in events: [ACDEvent]) -> [AgentEvent] {
        events.compactMap {
            guard case .toAgent(agentId, let event) = $0 else { return nil }
            if case .agentState = event { return nil }
            return event
        }
    }

    static func states(_ agentId: String, in events: [ACDEvent]) -> [AgentStatus] {
        events.compactMap {
            if case .toAgent(agentId, .agentState(let update)) = $0 { return update.state }
            return nil
        }
    }

    func agentState(_ agentId: String) -> AgentStatus? {
        engine.snapshot().agents.first { $0.agentId == agentId }?.state
    }

    func phase(_ rtcId: String) -> InteractionSnapshot.Phase? {
        engine.snapshot().interactions.first { $0.rtcId == rtcId }?.phase
    }
}

/// A thread-safe list of the events an engine emitted.
final class ACDEventLog: Sendable {
    private let storage = Mutex<[ACDEvent]>([])

    func append(_ event: ACDEvent) { storage.withLock { $0.append(event) } }

    var events: [ACDEvent] { storage.withLock { $0 } }

    func take() -> [ACDEvent] {
        storage.withLock { events in
            defer { events.removeAll() }
            return events
        }
    }
}
