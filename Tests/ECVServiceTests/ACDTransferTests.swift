import ECVProtocol
import ECVService
import Testing

@Suite("ACD transfer")
struct ACDTransferTests {
    /// Alice (on default and Billing) is connected to caller J; Bob is ready on default and Billing.
    struct Connected {
        let acd: ACDHarness
        let alice: String
        let bob: String
        let call: String
    }

    func connected(_ configuration: ACDConfiguration = ACDConfiguration(queues: ["default", "Billing"])) throws -> Connected {
        let acd = try ACDHarness(configuration)
        let alice = try acd.agent("Alice", queues: ["default", "Billing"])
        let call = try acd.dial("J", acd: ["priority": "3"], attributes: ["video_flow": "NTB"])
        try acd.engine.perform(.accept(rtcId: call), agentId: alice)
        acd.advance(by: 40)
        let bob = try acd.agent("Bob", queues: ["default", "Billing"])
        _ = acd.takeEvents()
        return Connected(acd: acd, alice: alice, bob: bob, call: call)
    }

    @Test func toAQueueCompletesAtOnceWithANewRtcIdThatQueuesAgain() throws {
        let setup = try connected()
        let (acd, alice, bob, call) = (setup.acd, setup.alice, setup.bob, setup.call)
        try acd.engine.perform(.transfer(rtcId: call, target: .queue("Billing")), agentId: alice)
        let events = acd.takeEvents()
        let newRtcId = "rtc-2"
        #expect(ACDHarness.pushes(to: call, in: events) == [
            .transferPending(rtcId: call, target: .queue("Billing")),
            .transferCompleted(rtcId: call, newRtcId: newRtcId),
        ])
        #expect(ACDHarness.agentEvents(alice, in: events) == [
            .transferPending(rtcId: call, target: .queue("Billing")),
            .transferCompleted(rtcId: call, newRtcId: newRtcId),
        ])
        #expect(events.contains(.roomClosed(rtcId: call)))
        // The new leg went to Bob, not back to Alice, with everything the caller dialed with.
        let offer = try #require(events.compactMap { event -> CallOffer? in
            if case .toAgent(bob, .offer(let offer)) = event { return offer }
            return nil
        }.first)
        #expect(offer.rtcId == newRtcId && offer.queue == "Billing" && offer.priority == 3)
        #expect(offer.attributes == ACDConfiguration.danamonAttributeDefaults.merging(["video_flow": "NTB"]) { $1 }
                && offer.callerName == "J")
        #expect(ACDHarness.offers(to: alice, in: events).isEmpty)
        #expect(acd.agentState(alice) == .ready)

        // The old rtcId answers "transferred"; the new one must not be dialed.
        #expect(acd.info(call) == QueueInfoResponse(rtcId: call, state: .transferred, position: -1, ewtSeconds: -1,
                                                    newRtcId: newRtcId))
        #expect(acd.engine.queueSocketGreeting(rtcId: call) == [.transferCompleted(rtcId: call, newRtcId: newRtcId)])
        #expect(acd.engine.queueSocketGreeting(rtcId: newRtcId) == [.waiting(rtcId: newRtcId, queue: "Billing")])
        #expect(throws: ACDError.alreadyDialed(newRtcId)) {
            _ = try acd.engine.dial(DialExRequest(rtcId: newRtcId, callerName: "J"))
        }
        #expect(throws: ACDError.alreadyDialed(call)) {
            _ = try acd.engine.dial(DialExRequest(rtcId: call, callerName: "J"))
        }
        try acd.engine.perform(.accept(rtcId: newRtcId), agentId: bob)
        #expect(ACDHarness.pushes(to: newRtcId, in: acd.takeEvents())
            == [.agentConnected(rtcId: newRtcId, agentId: bob, agentName: "Bob")])
        // Alice's 40 s leg counts as handled time.
        #expect(acd.engine.queueSummaries().queues.first { $0.name == "default" }?.averageHandleSeconds == 40)
    }

    @Test func toAnAgentThatRefuses() throws {
        let setup = try connected()
        let (acd, alice, bob, call) = (setup.acd, setup.alice, setup.bob, setup.call)
        try acd.engine.perform(.transfer(rtcId: call, target: .agent(bob)), agentId: alice)
        let started = acd.takeEvents()
        #expect(ACDHarness.pushes(to: call, in: started) == [.transferPending(rtcId: call, target: .agent(bob))])
        let offer = try #require(started.compactMap { event -> CallOffer? in
            if case .toAgent(bob, .offer(let offer)) = event { return offer }
            return nil
        }.first)
        #expect(offer.transfer == TransferOrigin(fromAgentId: alice, fromRtcId: call))
        #expect(acd.info(call).state == .transferPending)
        #expect(acd.engine.queueSocketGreeting(rtcId: call) == [
            .agentConnected(rtcId: call, agentId: alice, agentName: "Alice"),
            .transferPending(rtcId: call, target: .agent(bob)),
        ])

        try acd.engine.perform(.reject(rtcId: offer.rtcId), agentId: bob)
        let refused = acd.takeEvents()
        #expect(ACDHarness.pushes(to: call, in: refused) == [.transferCancelled(rtcId: call, reason: .refused)])
        #expect(ACDHarness.agentEvents(alice, in: refused) == [.transferCancelled(rtcId: call, reason: .refused)])
        #expect(acd.info(call).state == .agentConnected)
        #expect(acd.agentState(bob) == .ready)
        #expect(acd.engine.snapshot().pendingTransfers == 0)
        // The call goes on: Alice can still hang up normally.
        try acd.engine.perform(.hangup(rtcId: call), agentId: alice)
        #expect(acd.info(call).state == .ended)
    }

    @Test func toAnAgentCancelledByTheTransferringAgent() throws {
        let setup = try connected()
        let (acd, alice, bob, call) = (setup.acd, setup.alice, setup.bob, setup.call)
        try acd.engine.perform(.transfer(rtcId: call, target: .agent(bob)), agentId: alice)
        let newRtcId = try #require(ACDHarness.offers(to: bob, in: acd.takeEvents()).first)
        try acd.engine.perform(.cancelTransfer(rtcId: call), agentId: alice)
        let events = acd.takeEvents()
        #expect(ACDHarness.pushes(to: call, in: events) == [.transferCancelled(rtcId: call, reason: .cancelled)])
        #expect(ACDHarness.agentEvents(bob, in: events) == [.offerWithdrawn(rtcId: newRtcId, reason: .cancelled)])
        #expect(throws: ACDError.invalidState("no offer of \"\(newRtcId)\" is ringing at agent \"\(bob)\"")) {
            try acd.engine.perform(.accept(rtcId: newRtcId), agentId: bob)
        }
        #expect(throws: ACDError.invalidState("no transfer of \"\(call)\" is pending")) {
            try acd.engine.perform(.cancelTransfer(rtcId: call), agentId: alice)
        }
    }

    @Test func toAnAgentThatNeverAnswers() throws {
        let setup = try connected(ACDConfiguration(queues: ["default", "Billing"], offerTimeout: 10))
        let (acd, alice, bob, call) = (setup.acd, setup.alice, setup.bob, setup.call)
        try acd.engine.perform(.transfer(rtcId: call, target: .agent(bob)), agentId: alice)
        let newRtcId = try #require(ACDHarness.offers(to: bob, in: acd.takeEvents()).first)
        acd.advance(by: 10)
        let events = acd.takeEvents()
        #expect(ACDHarness.pushes(to: call, in: events) == [.transferCancelled(rtcId: call, reason: .timeout)])
        #expect(ACDHarness.agentEvents(bob, in: events) == [.offerWithdrawn(rtcId: newRtcId, reason: .timeout)])
        #expect(acd.agentState(bob) == .notReady)
        #expect(acd.info(call).state == .agentConnected)
    }

    @Test func toAnAgentCompletedConnectsTheNewLegAtOnce() throws {
        let setup = try connected()
        let (acd, alice, bob, call) = (setup.acd, setup.alice, setup.bob, setup.call)
        try acd.engine.perform(.transfer(rtcId: call, target: .agent(bob)), agentId: alice)
        let newRtcId = try #require(ACDHarness.offers(to: bob, in: acd.takeEvents()).first)
        #expect(newRtcId != call)
        acd.advance(by: 5)
        try acd.engine.perform(.accept(rtcId: newRtcId), agentId: bob)
        let events = acd.takeEvents()
        #expect(ACDHarness.pushes(to: call, in: events) == [.transferCompleted(rtcId: call, newRtcId: newRtcId)])
        #expect(ACDHarness.pushes(to: newRtcId, in: events) == [.agentConnected(rtcId: newRtcId, agentId: bob, agentName: "Bob")])
        #expect(ACDHarness.agentEvents(alice, in: events) == [.transferCompleted(rtcId: call, newRtcId: newRtcId)])
        #expect(ACDHarness.agentEvents(bob, in: events) == [.callConnected(rtcId: newRtcId, callerName: "J")])
        #expect(events.contains(.roomClosed(rtcId: call)))
        #expect(acd.agentState(alice) == .ready)
        #expect(acd.agentState(bob) == .busy)
        // A caller whose socket opens only now, for the new leg, learns it is connected.
        #expect(acd.engine.queueSocketGreeting(rtcId: newRtcId) == [.agentConnected(rtcId: newRtcId, agentId: bob, agentName: "Bob")])
        #expect(acd.info(call).newRtcId == newRtcId)
        #expect(acd.info(newRtcId).state == .agentConnected)
        try acd.engine.perform(.hangup(rtcId: newRtcId), agentId: bob)
        #expect(acd.info(newRtcId).reason == .agentHangup)
    }

    @Test func refusedTransferRequests() throws {
        let setup = try connected()
        let (acd, alice, bob, call) = (setup.acd, setup.alice, setup.bob, setup.call)
        #expect(throws: ACDError.targetUnavailable(agentId: alice)) {
            try acd.engine.perform(.transfer(rtcId: call, target: .agent(alice)), agentId: alice)
        }
        #expect(throws: ACDError.unknownAgent("agent-77")) {
            try acd.engine.perform(.transfer(rtcId: call, target: .agent("agent-77")), agentId: alice)
        }
        #expect(throws: ACDError.unknownQueue("Sales")) {
            try acd.engine.perform(.transfer(rtcId: call, target: .queue("Sales")), agentId: alice)
        }
        #expect(throws: ACDError.invalidState("call \"\(call)\" is not connected to agent \"\(bob)\"")) {
            try acd.engine.perform(.transfer(rtcId: call, target: .queue("Billing")), agentId: bob)
        }
        try acd.engine.perform(.notReady, agentId: bob)
        #expect(throws: ACDError.targetUnavailable(agentId: bob)) {
            try acd.engine.perform(.transfer(rtcId: call, target: .agent(bob)), agentId: alice)
        }
        try acd.engine.perform(.ready(queues: []), agentId: bob)
        try acd.engine.perform(.transfer(rtcId: call, target: .agent(bob)), agentId: alice)
        #expect(throws: ACDError.invalidState("a transfer of \"\(call)\" is already pending")) {
            try acd.engine.perform(.transfer(rtcId: call, target: .queue("Billing")), agentId: alice)
        }
        // Nothing about the refused requests reached the caller.
        #expect(ACDHarness.pushes(to: call, in: acd.takeEvents()) == [.transferPending(rtcId: call, target: .agent(bob))])
    }

    @Test func aVersion15ServiceRefusesTransfers() throws {
        let setup = try connected(ACDConfiguration(queues: ["default", "Billing"], transfersEnabled: false))
        #expect(throws: ACDError.transferUnsupported) {
            try setup.acd.engine.perform(.transfer(rtcId: setup.call, target: .queue("Billing")), agentId: setup.alice)
        }
        #expect(ACDError.transferUnsupported.httpStatus == 501)
    }
}
