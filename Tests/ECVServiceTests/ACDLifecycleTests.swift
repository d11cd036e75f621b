import ECVProtocol
import ECVService
import Testing

@Suite("ACD hangup and lifecycle")
struct ACDLifecycleTests {
    @Test func callerHangsUpWhileEnteringTheACD() throws {
        let acd = try ACDHarness(ACDConfiguration(queueEntryDelay: 5))
        let call = try acd.dial("J")
        #expect(acd.phase(call) == .entering)
        try acd.engine.hangUp(rtcId: call)
        #expect(acd.takeEvents() == [
            .toCaller(rtcId: call, .callEnded(rtcId: call, reason: .callerHangup)),
            .roomClosed(rtcId: call),
        ])
        #expect(acd.info(call).state == .ended)
        acd.advance(by: 10)
        #expect(acd.takeEvents().isEmpty, "the entry deadline of an ended call must not fire")
    }

    @Test func callerHangsUpWhileQueued() throws {
        let acd = try ACDHarness()
        let call = try acd.dial("J")
        try acd.engine.hangUp(rtcId: call)
        #expect(ACDHarness.pushes(to: call, in: acd.takeEvents()) == [.callEnded(rtcId: call, reason: .callerHangup)])
        #expect(acd.info(call) == QueueInfoResponse(rtcId: call, state: .ended, position: -1, ewtSeconds: -1,
                                                    reason: .callerHangup))
    }

    @Test func callerHangsUpWhileRinging() throws {
        let acd = try ACDHarness()
        let agent = try acd.agent("A")
        let call = try acd.dial("J")
        _ = acd.takeEvents()
        try acd.engine.hangUp(rtcId: call)
        let events = acd.takeEvents()
        #expect(ACDHarness.agentEvents(agent, in: events) == [.offerWithdrawn(rtcId: call, reason: .callerHangup)])
        #expect(ACDHarness.states(agent, in: events) == [.ready])
        // The agent takes the next call at once.
        let next = try acd.dial("K")
        #expect(ACDHarness.offers(to: agent, in: acd.takeEvents()) == [next])
    }

    @Test func callerHangsUpWhileConnected() throws {
        let acd = try ACDHarness()
        let agent = try acd.agent("A")
        let call = try acd.dial("J")
        try acd.engine.perform(.accept(rtcId: call), agentId: agent)
        acd.advance(by: 42)
        _ = acd.takeEvents()
        try acd.engine.hangUp(rtcId: call)
        #expect(acd.takeEvents() == [
            .toCaller(rtcId: call, .callEnded(rtcId: call, reason: .callerHangup)),
            .toAgent(agentId: agent, .callEnded(rtcId: call, reason: .callerHangup)),
            .roomClosed(rtcId: call),
            .toAgent(agentId: agent, .agentState(AgentStateUpdate(agentId: agent, state: .ready, queues: ["default"]))),
        ])
        #expect(acd.engine.queueSummaries().queues.first?.averageHandleSeconds == 42)
    }

    @Test func callerHangsUpDuringAPendingTransfer() throws {
        let acd = try ACDHarness()
        let alice = try acd.agent("Alice")
        let call = try acd.dial("J")
        try acd.engine.perform(.accept(rtcId: call), agentId: alice)
        let bob = try acd.agent("Bob")
        try acd.engine.perform(.transfer(rtcId: call, target: .agent(bob)), agentId: alice)
        let newRtcId = try #require(ACDHarness.offers(to: bob, in: acd.takeEvents()).first)
        try acd.engine.hangUp(rtcId: call)
        let events = acd.takeEvents()
        #expect(ACDHarness.agentEvents(bob, in: events) == [.offerWithdrawn(rtcId: newRtcId, reason: .callerHangup)])
        #expect(ACDHarness.agentEvents(alice, in: events) == [.callEnded(rtcId: call, reason: .callerHangup)])
        #expect(acd.engine.snapshot().pendingTransfers == 0)
        #expect(acd.agentState(bob) == .ready)
    }

    @Test func agentHangsUpDuringAPendingTransfer() throws {
        let acd = try ACDHarness()
        let alice = try acd.agent("Alice")
        let call = try acd.dial("J")
        try acd.engine.perform(.accept(rtcId: call), agentId: alice)
        let bob = try acd.agent("Bob")
        try acd.engine.perform(.transfer(rtcId: call, target: .agent(bob)), agentId: alice)
        let newRtcId = try #require(ACDHarness.offers(to: bob, in: acd.takeEvents()).first)
        try acd.engine.perform(.hangup(rtcId: call), agentId: alice)
        let events = acd.takeEvents()
        #expect(ACDHarness.pushes(to: call, in: events) == [.callEnded(rtcId: call, reason: .agentHangup)])
        #expect(ACDHarness.agentEvents(bob, in: events) == [.offerWithdrawn(rtcId: newRtcId, reason: .cancelled)])
        #expect(ACDHarness.agentEvents(alice, in: events) == [.callEnded(rtcId: call, reason: .agentHangup)])
    }

    @Test func agentLostInEveryState() throws {
        let acd = try ACDHarness()
        // Ringing: the call is re-routed and keeps its place.
        let ringing = try acd.agent("Ringing")
        let first = try acd.dial("1")
        let other = try acd.agent("Other")
        try acd.engine.removeAgent(ringing)
        #expect(acd.phase(first) == .offered(agentId: other))
        // Busy: the call ends with AGENT_LOST.
        try acd.engine.perform(.accept(rtcId: first), agentId: other)
        _ = acd.takeEvents()
        try acd.engine.removeAgent(other)
        #expect(ACDHarness.pushes(to: first, in: acd.takeEvents()) == [.callEnded(rtcId: first, reason: .agentLost)])
        // A transfer target that leaves cancels the transfer.
        let alice = try acd.agent("Alice")
        let second = try acd.dial("2")
        try acd.engine.perform(.accept(rtcId: second), agentId: alice)
        let bob = try acd.agent("Bob")
        try acd.engine.perform(.transfer(rtcId: second, target: .agent(bob)), agentId: alice)
        _ = acd.takeEvents()
        try acd.engine.removeAgent(bob)
        #expect(ACDHarness.pushes(to: second, in: acd.takeEvents()) == [.transferCancelled(rtcId: second, reason: .targetLost)])
        #expect(acd.info(second).state == .agentConnected)
        #expect(throws: ACDError.unknownAgent(bob)) { try acd.engine.removeAgent(bob) }
        #expect(acd.engine.agentId(forToken: "token-6") == nil) // Bob's (the two dials took caller tokens)
    }

    @Test func hangupIsIdempotentAndRefusesUnknownCalls() throws {
        let acd = try ACDHarness()
        let call = try acd.dial("J")
        try acd.engine.hangUp(rtcId: call)
        _ = acd.takeEvents()
        try acd.engine.hangUp(rtcId: call)
        #expect(acd.takeEvents().isEmpty)
        #expect(throws: ACDError.unknownRtcId("rtc-404")) { try acd.engine.hangUp(rtcId: "rtc-404") }
        // An issued, never-dialed rtcId is simply discarded.
        let undialed = acd.engine.issueRtcId()
        try acd.engine.hangUp(rtcId: undialed)
        #expect(throws: ACDError.unknownRtcId(undialed)) {
            _ = try acd.engine.dial(DialExRequest(rtcId: undialed, callerName: "J"))
        }
    }

    @Test func dialValidation() throws {
        let acd = try ACDHarness(ACDConfiguration(queues: ["default", "Billing"]))
        let rtcId = acd.engine.issueRtcId()
        func dial(_ request: DialExRequest) throws(ACDError) { _ = try acd.engine.dial(request) }
        #expect(throws: ACDError.unknownRtcId("mine")) { try dial(DialExRequest(rtcId: "mine", callerName: "J")) }
        #expect(throws: ACDError.invalidField(field: "rtcId", reason: "must be 1-128 characters of [A-Za-z0-9._~-]")) {
            try dial(DialExRequest(rtcId: "a b", callerName: "J"))
        }
        #expect(throws: ACDError.invalidField(field: "callerName", reason: "must not be empty")) {
            try dial(DialExRequest(rtcId: rtcId, callerName: "  "))
        }
        #expect(throws: ACDError.unknownQueue("Sales")) { try dial(DialExRequest(rtcId: rtcId, callerName: "J", queue: "Sales")) }
        #expect(throws: ACDError.invalidField(field: "queue", reason: "must not be empty")) {
            try dial(DialExRequest(rtcId: rtcId, callerName: "J", queue: ""))
        }
        #expect(throws: ACDError.invalidField(field: "acdAttributes.priority", reason: "expected an integer, got \"high\"")) {
            try dial(DialExRequest(rtcId: rtcId, callerName: "J", acdAttributes: ["priority": "high"]))
        }
        #expect(throws: ACDError.invalidField(field: "acdAttributes.hearingImpaired",
                                              reason: "expected \"true\" or \"false\", got \"yes\"")) {
            try dial(DialExRequest(rtcId: rtcId, callerName: "J", acdAttributes: ["hearingImpaired": "yes"]))
        }
        // None of the refused attempts consumed the rtcId.
        let response = try acd.engine.dial(DialExRequest(rtcId: rtcId, callerName: "J", queue: "Billing"))
        #expect(response == DialExResponse(rtcId: rtcId, interactionId: "ix-1", queue: "Billing", priority: 0, callerToken: "token-1"))
        #expect(throws: ACDError.alreadyDialed(rtcId)) { try dial(DialExRequest(rtcId: rtcId, callerName: "J")) }
        #expect(ACDError.alreadyDialed(rtcId).response.code == .alreadyDialed)
        #expect(ACDError.invalidField(field: "queue", reason: "x").response.field == "queue")
    }

    @Test func appsMayBringTheirOwnRtcIdWhenAllowed() throws {
        let acd = try ACDHarness(ACDConfiguration(acceptsUnissuedRtcIds: true))
        #expect(try acd.engine.dial(DialExRequest(rtcId: "app-chosen-1", callerName: "J")).rtcId == "app-chosen-1")
    }

    @Test func aQueuedCallThatWaitsTooLongEnds() throws {
        let acd = try ACDHarness(ACDConfiguration(maxQueueWait: 300))
        let call = try acd.dial("J")
        acd.advance(by: 299)
        #expect(acd.info(call).state == .wait)
        acd.advance(by: 1)
        #expect(acd.info(call).reason == .queueTimeout)
    }

    @Test func shutdownEndsEveryCallAndRefusesNewOnes() throws {
        let acd = try ACDHarness()
        let agent = try acd.agent("A")
        let connected = try acd.dial("1")
        try acd.engine.perform(.accept(rtcId: connected), agentId: agent)
        let queued = try acd.dial("2")
        _ = acd.takeEvents()
        acd.engine.shutDown()
        let events = acd.takeEvents()
        #expect(ACDHarness.pushes(to: connected, in: events) == [.callEnded(rtcId: connected, reason: .serviceShutdown)])
        #expect(ACDHarness.pushes(to: queued, in: events) == [.callEnded(rtcId: queued, reason: .serviceShutdown)])
        #expect(ACDHarness.offers(to: agent, in: events).isEmpty, "nothing is routed while shutting down")
        #expect(throws: ACDError.shuttingDown) { try acd.dial("3") }
    }

    /// A whole day in miniature; afterwards the engine holds nothing.
    @Test func nothingOutlivesItsCall() throws {
        let acd = try ACDHarness(ACDConfiguration(queues: ["default", "Billing"], afterCallWork: 5,
                                                  queueEntryDelay: 1, endedCallRetention: 60,
                                                  issuedRtcIdLifetime: 100))
        let alice = try acd.agent("Alice", queues: ["default", "Billing"])
        let bob = try acd.agent("Bob", queues: ["Billing"])
        let first = try acd.dial("1")
        _ = acd.engine.issueRtcId()  // never dialed
        acd.advance(by: 1)
        try acd.engine.perform(.reject(rtcId: first), agentId: alice)  // stays queued: Bob is not on default
        let second = try acd.dial("2", acd: ["hearingImpaired": "true"])
        acd.advance(by: 1)
        try acd.engine.perform(.accept(rtcId: second), agentId: alice)
        acd.advance(by: 20)
        try acd.engine.perform(.transfer(rtcId: second, target: .queue("Billing")), agentId: alice)
        let transferred = try #require(acd.info(second).newRtcId)
        acd.advance(by: 1)
        try acd.engine.perform(.accept(rtcId: transferred), agentId: bob)
        acd.advance(by: 5)
        try acd.engine.hangUp(rtcId: first)
        try acd.engine.perform(.hangup(rtcId: transferred), agentId: bob)
        let live = acd.engine.snapshot()
        #expect(live.interactions.isEmpty)
        #expect(live.rememberedEndedCalls == 3)

        try acd.engine.removeAgent(alice)
        try acd.engine.removeAgent(bob)
        acd.advance(by: 100)
        #expect(acd.engine.snapshot().isEmpty, "left behind: \(acd.engine.snapshot())")
        #expect(acd.engine.nextDeadline == nil)
        #expect(acd.info(first).state == .notFound)
    }
}
