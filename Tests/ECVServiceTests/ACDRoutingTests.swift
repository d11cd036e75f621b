import ECVProtocol
import ECVService
import Synchronization
import Testing

@Suite("ACD routing")
struct ACDRoutingTests {
    @Test func queueOrderIsPriorityThenArrival() throws {
        let acd = try ACDHarness()
        let plain1 = try acd.dial("plain 1")
        acd.advance(by: 1)
        let urgent = try acd.dial("urgent", acd: ["priority": "5"])
        acd.advance(by: 1)
        let plain2 = try acd.dial("plain 2")
        acd.advance(by: 1)
        let impaired = try acd.dial("impaired", acd: ["visuallyImpaired": "TRUE", "priority": "1"])
        #expect([impaired, urgent, plain1, plain2].map { acd.info($0).position } == [1, 2, 3, 4])

        // One agent serves them one by one, in that order.
        let agent = try acd.agent("A")
        var served: [String] = []
        for _ in 0..<4 {
            let offered = try #require(ACDHarness.offers(to: agent, in: acd.takeEvents()).first)
            served.append(offered)
            try acd.engine.perform(.accept(rtcId: offered), agentId: agent)
            acd.advance(by: 30)
            try acd.engine.perform(.hangup(rtcId: offered), agentId: agent)
        }
        #expect(served == [impaired, urgent, plain1, plain2])
    }

    @Test func accessibilityFlagsLiftButNeverLowerPriority() throws {
        let acd = try ACDHarness(ACDConfiguration(accessibilityPriority: 10))
        let rtcId = acd.engine.issueRtcId()
        let response = try acd.engine.dial(DialExRequest(
            rtcId: rtcId, callerName: "J", acdAttributes: ["priority": "20", "hearingImpaired": "true"]))
        #expect(response.priority == 20)
        #expect(try acd.engine.dial(DialExRequest(
            rtcId: acd.engine.issueRtcId(), callerName: "K", acdAttributes: ["hearingImpaired": "true"])).priority == 10)
        #expect(try acd.engine.dial(DialExRequest(
            rtcId: acd.engine.issueRtcId(), callerName: "L", acdAttributes: ["hearingImpaired": "false"])).priority == 0)
    }

    @Test func theLongestIdleAgentGetsTheCall() throws {
        let acd = try ACDHarness()
        let a = try acd.agent("A")
        acd.advance(by: 1)
        let b = try acd.agent("B")
        acd.advance(by: 1)
        let c = try acd.agent("C")
        _ = acd.takeEvents()

        let first = try acd.dial("1")
        #expect(ACDHarness.offers(to: a, in: acd.takeEvents()) == [first])
        try acd.engine.perform(.accept(rtcId: first), agentId: a)
        acd.advance(by: 10)
        try acd.engine.perform(.hangup(rtcId: first), agentId: a)  // A idle since 12: now the most recent

        let second = try acd.dial("2")
        #expect(ACDHarness.offers(to: b, in: acd.takeEvents()) == [second])
        let third = try acd.dial("3")
        #expect(ACDHarness.offers(to: c, in: acd.takeEvents()) == [third])
        try acd.engine.perform(.reject(rtcId: second), agentId: b)  // B stays idle since 1, but declined "2"
        #expect(ACDHarness.offers(to: a, in: acd.takeEvents()) == [second])
    }

    @Test func agentsOnlyGetCallsOfTheirQueues() throws {
        let acd = try ACDHarness(ACDConfiguration(queues: ["default", "Billing"]))
        let billingAgent = try acd.agent("B", queues: ["Billing"])
        let call = try acd.dial("1")
        #expect(ACDHarness.offers(to: billingAgent, in: acd.takeEvents()).isEmpty)
        let billingCall = try acd.dial("2", queue: "Billing")
        #expect(ACDHarness.offers(to: billingAgent, in: acd.takeEvents()) == [billingCall])
        #expect(acd.phase(call) == .queued)
    }

    @Test func anUnansweredOfferTimesOutAndIsReRouted() throws {
        let acd = try ACDHarness(ACDConfiguration(offerTimeout: 15))
        let a = try acd.agent("A")
        acd.advance(by: 1)
        let b = try acd.agent("B")
        let call = try acd.dial("J")
        _ = acd.takeEvents()

        acd.advance(by: 14.5)
        #expect(acd.takeEvents().isEmpty)
        acd.advance(by: 0.5)
        let events = acd.takeEvents()
        #expect(events == [
            .toAgent(agentId: a, .offerWithdrawn(rtcId: call, reason: .timeout)),
            .toAgent(agentId: a, .agentState(AgentStateUpdate(agentId: a, state: .notReady, queues: ["default"],
                                                              reason: "NO_ANSWER"))),
            .toAgent(agentId: b, .offer(CallOffer(rtcId: call, interactionId: "ix-1", callerName: "J", queue: "default",
                                                  attributes: ACDConfiguration.danamonAttributeDefaults, timeoutSeconds: 15))),
            .toAgent(agentId: b, .agentState(AgentStateUpdate(agentId: b, state: .ringing, queues: ["default"],
                                                              rtcId: call))),
        ])
        // The agent that never answered is not offered anything until it is ready again.
        try acd.engine.perform(.reject(rtcId: call), agentId: b)
        #expect(acd.phase(call) == .queued)
        try acd.engine.perform(.ready(queues: []), agentId: a)
        #expect(ACDHarness.offers(to: a, in: acd.takeEvents()) == [call])
    }

    @Test func aRejectedCallIsReRoutedAndNeverReofferedToWhoRejectedIt() throws {
        let acd = try ACDHarness()
        let a = try acd.agent("A")
        acd.advance(by: 1)
        let b = try acd.agent("B")
        let call = try acd.dial("J")
        _ = acd.takeEvents()

        try acd.engine.perform(.reject(rtcId: call), agentId: a)
        #expect(ACDHarness.offers(to: b, in: acd.takeEvents()) == [call])
        try acd.engine.perform(.reject(rtcId: call), agentId: b)
        #expect(acd.takeEvents().allSatisfy { if case .toAgent(_, .offer) = $0 { false } else { true } })
        #expect(acd.phase(call) == .queued)
        #expect(acd.agentState(a) == .ready && acd.agentState(b) == .ready)

        let c = try acd.agent("C")
        #expect(ACDHarness.offers(to: c, in: acd.takeEvents()) == [call])
    }

    @Test func goingNotReadyWhileRingingRejects() throws {
        let acd = try ACDHarness()
        let a = try acd.agent("A")
        let call = try acd.dial("J")
        _ = acd.takeEvents()
        try acd.engine.perform(.notReady, agentId: a)
        #expect(acd.phase(call) == .queued)
        #expect(acd.agentState(a) == .notReady)
        #expect(ACDHarness.offers(to: a, in: acd.takeEvents()).isEmpty)
    }

    @Test func acceptConnectsBothSides() throws {
        let acd = try ACDHarness()
        let a = try acd.agent("Alice")
        let call = try acd.dial("J", attributes: ["video_flow": "ETB"])
        let offer = acd.takeEvents().compactMap { event -> CallOffer? in
            if case .toAgent(_, .offer(let offer)) = event { return offer }
            return nil
        }
        // What the caller dialed, with the seed's defaults for the keys it lacked.
        #expect(offer.first?.attributes == ["video_flow": "ETB", "video_channel": "Saving (1.0)",
                                            "video_application": "DBP 1.0", "video_language": "id"])
        try acd.engine.perform(.accept(rtcId: call), agentId: a)
        #expect(acd.takeEvents() == [
            .toCaller(rtcId: call, .agentConnected(rtcId: call, agentId: a, agentName: "Alice")),
            .toAgent(agentId: a, .callConnected(rtcId: call, callerName: "J")),
            .toAgent(agentId: a, .agentState(AgentStateUpdate(agentId: a, state: .busy, queues: ["default"], rtcId: call))),
        ])
        #expect(acd.engine.queueSocketGreeting(rtcId: call) == [.agentConnected(rtcId: call, agentId: a, agentName: "Alice")])
        #expect(acd.info(call).state == .agentConnected)
    }

    /// The seed's Danamon backward compatibility: a DialEx without the four attached-data fields
    /// reaches the agent with `NTB`, `Saving (1.0)`, `DBP 1.0`, `id`; what it dialed is kept; a queue
    /// can have its own defaults or none.
    @Test func attributeDefaultsFillOnlyWhatADialLacks() throws {
        var configuration = ACDConfiguration(queues: ["default", "Billing", "Plain"])
        configuration.queueAttributeDefaults = ["Billing": ["video_language": "en"], "Plain": [:]]
        let acd = try ACDHarness(configuration)
        _ = try acd.agent("Alice", queues: ["default", "Billing", "Plain"])
        func offered(_ queue: String, _ attributes: [String: String]) throws -> [String: String]? {
            let call = try acd.dial("J", queue: queue, attributes: attributes)
            let offer = acd.takeEvents().compactMap { event -> CallOffer? in
                if case .toAgent(_, .offer(let offer)) = event, offer.rtcId == call { return offer }
                return nil
            }.first
            try acd.engine.hangUp(rtcId: call)   // the ringing agent is free for the next one
            _ = acd.takeEvents()
            return offer?.attributes
        }
        #expect(try offered("default", [:]) == ["video_flow": "NTB", "video_channel": "Saving (1.0)",
                                                "video_application": "DBP 1.0", "video_language": "id"])
        #expect(try offered("default", ["video_flow": "ETB", "video_language": "", "note": "x"])
            == ["video_flow": "ETB", "video_channel": "Saving (1.0)", "video_application": "DBP 1.0",
                "video_language": "", "note": "x"])
        #expect(try offered("Billing", [:]) == ["video_language": "en"])
        #expect(try offered("Plain", ["note": "x"]) == ["note": "x"])

        #expect(throws: ACDError.invalidConfiguration("queueAttributeDefaults names \"Nowhere\", which is not one of the queues")) {
            try ACDConfiguration(queueAttributeDefaults: ["Nowhere": [:]]).validated()
        }
        #expect(throws: ACDError.invalidConfiguration("attribute default keys must not be empty")) {
            try ACDConfiguration(attributeDefaults: ["": "x"]).validated()
        }
    }

    @Test func commandsOutOfStateAreRefused() throws {
        let acd = try ACDHarness()
        let a = try acd.agent("A")
        let b = try acd.agent("B")
        let call = try acd.dial("J")
        #expect(throws: ACDError.invalidState("no offer of \"\(call)\" is ringing at agent \"\(b)\"")) {
            try acd.engine.perform(.accept(rtcId: call), agentId: b)
        }
        #expect(throws: ACDError.invalidState("call \"\(call)\" is not connected to agent \"\(a)\"")) {
            try acd.engine.perform(.hangup(rtcId: call), agentId: a)
        }
        #expect(throws: ACDError.unknownAgent("agent-99")) { try acd.engine.perform(.notReady, agentId: "agent-99") }
        #expect(throws: ACDError.unknownQueue("Nope")) { try acd.engine.perform(.ready(queues: ["Nope"]), agentId: a) }
        // The socket helper answers with the wire error.
        let answer = acd.engine.handle(AgentRequest(.accept(rtcId: call), requestId: "9"), from: b)
        #expect(answer == .error(requestId: "9", code: .invalidState,
                                 message: "no offer of \"\(call)\" is ringing at agent \"\(b)\""))
        #expect(acd.engine.handle(AgentRequest(.accept(rtcId: call), requestId: "10"), from: a) == .ack(requestId: "10"))
        #expect(acd.engine.handle(AgentRequest(.notReady), from: b) == nil)
    }

    @Test func wrapUpDelaysTheNextOfferAndReadyEndsItEarly() throws {
        let acd = try ACDHarness(ACDConfiguration(afterCallWork: 30))
        let a = try acd.agent("A")
        let first = try acd.dial("1")
        try acd.engine.perform(.accept(rtcId: first), agentId: a)
        try acd.engine.perform(.hangup(rtcId: first), agentId: a)
        #expect(acd.agentState(a) == .afterCall)
        let second = try acd.dial("2")
        acd.advance(by: 29)
        #expect(acd.phase(second) == .queued)
        acd.advance(by: 1)
        #expect(acd.phase(second) == .offered(agentId: a))

        try acd.engine.perform(.accept(rtcId: second), agentId: a)
        try acd.engine.perform(.hangup(rtcId: second), agentId: a)
        let third = try acd.dial("3")
        try acd.engine.perform(.ready(queues: ["default"]), agentId: a)
        #expect(acd.phase(third) == .offered(agentId: a))
    }

    @Test func aHandlerThatCallsBackIntoTheEngineSeesEventsInOrder() throws {
        // An auto-answering agent implemented inside the event handler: re-entrant calls must not
        // deadlock, and their events come after the ones being delivered.
        let clock = ManualACDClock()
        let log = ACDEventLog()
        let box = EngineBox()
        let engine = try ACDEngine(configuration: ACDConfiguration(identifiers: .sequential), clock: clock) { event in
            log.append(event)
            if case .toAgent(let agentId, .offer(let offer)) = event {
                try? box.engine?.perform(.accept(rtcId: offer.rtcId), agentId: agentId)
            }
        }
        box.engine = engine
        let agentId = try engine.login(name: "Bot").agentId
        try engine.perform(.ready(queues: []), agentId: agentId)
        let rtcId = engine.issueRtcId()
        _ = try engine.dial(DialExRequest(rtcId: rtcId, callerName: "J"))
        let kinds = log.events.map { event -> String in
            switch event {
            case .toAgent(_, let agentEvent): "agent:\(agentEvent.kind.rawValue)"
            case .toCaller(_, let message): "caller:\(message.kind.rawValue)"
            case .roomClosed: "room"
            }
        }
        #expect(kinds == ["agent:agent_state", "agent:offer", "agent:agent_state",
                          "caller:agent_connected", "agent:call_connected", "agent:agent_state"])
    }
}

final class EngineBox: Sendable {
    private let storage = Mutex<ACDEngine?>(nil)
    var engine: ACDEngine? {
        get { storage.withLock { $0 } }
        set { storage.withLock { $0 = newValue } }
    }
}
