import ECVProtocol
import ECVService
import Testing

@Suite("ACD queue position and estimated wait")
struct ACDQueueInfoTests {
    func figures(_ info: QueueInfoResponse) -> (WaitState, Int?, Double?) {
        (info.state, info.position, info.ewtSeconds)
    }

    /// The worked example of docs/protocol.md §3.7, step by step.
    @Test func workedExampleFromTheProtocolDocument() throws {
        let acd = try ACDHarness(ACDConfiguration(offerTimeout: 15, afterCallWork: 0, queueEntryDelay: 2,
                                                  assumedHandleTime: 120))
        let a = try acd.agent("A")
        let first = try acd.dial("1")
        #expect(figures(acd.info(first)) == (.wait, -1, -1))  // not in the ACD yet
        acd.advance(to: 2)
        #expect(acd.phase(first) == .offered(agentId: a))
        #expect(figures(acd.info(first)) == (.wait, -1, -1))  // ringing: URS no longer tracks it
        acd.advance(to: 3)
        try acd.engine.perform(.accept(rtcId: first), agentId: a)
        #expect(figures(acd.info(first)) == (.agentConnected, -1, -1))

        acd.advance(to: 10)
        let second = try acd.dial("2")
        #expect(figures(acd.info(second)) == (.wait, -1, -1))
        acd.advance(to: 12)
        #expect(figures(acd.info(second)) == (.wait, 1, 111))  // A is free at 3 + 120

        acd.advance(to: 13)
        let third = try acd.dial("3")
        acd.advance(to: 15)
        #expect(figures(acd.info(second)) == (.wait, 1, 108))
        #expect(figures(acd.info(third)) == (.wait, 2, 228))  // A's second slot: 243

        acd.advance(to: 20)
        let fourth = try acd.dial("4", acd: ["hearingImpaired": "true"])
        acd.advance(to: 22)
        #expect(figures(acd.info(fourth)) == (.wait, 1, 101))
        #expect(figures(acd.info(second)) == (.wait, 2, 221))
        #expect(figures(acd.info(third)) == (.wait, 3, 341))

        acd.advance(to: 63)
        try acd.engine.perform(.hangup(rtcId: first), agentId: a)  // a 60 s call: AHT is now 60
        #expect(acd.phase(fourth) == .offered(agentId: a))
        #expect(figures(acd.info(fourth)) == (.wait, -1, -1))
        #expect(figures(acd.info(second)) == (.wait, 1, 60))  // A, ringing, frees up after one AHT
        #expect(figures(acd.info(third)) == (.wait, 2, 120))

        acd.advance(to: 70)
        let b = try acd.agent("B")
        #expect(acd.phase(second) == .offered(agentId: b))
        #expect(figures(acd.info(second)) == (.wait, -1, -1))
        #expect(figures(acd.info(third)) == (.wait, 1, 60))  // both ringing: free at 70 + 60
        #expect(figures(acd.info(first)) == (.ended, -1, -1))
        #expect(acd.info(first).reason == .agentHangup)
    }

    @Test func noAgentWorkingTheQueueMeansAPositionWithoutEWT() throws {
        let acd = try ACDHarness()
        let call = try acd.dial("J")
        #expect(figures(acd.info(call)) == (.wait, 1, -1))
        let agent = try acd.engine.login(name: "A").agentId  // logged in but not ready: not working the queue
        _ = agent
        #expect(figures(acd.info(call)) == (.wait, 1, -1))
    }

    @Test func noHandleTimeKnownMeansAPositionWithoutEWT() throws {
        let acd = try ACDHarness(ACDConfiguration(assumedHandleTime: nil))
        let a = try acd.agent("A")
        let first = try acd.dial("1")
        try acd.engine.perform(.accept(rtcId: first), agentId: a)
        let second = try acd.dial("2")
        #expect(figures(acd.info(second)) == (.wait, 1, -1))
        acd.advance(by: 30)
        try acd.engine.perform(.hangup(rtcId: first), agentId: a)
        try acd.engine.perform(.accept(rtcId: second), agentId: a)
        let third = try acd.dial("3")
        acd.advance(by: 10)
        #expect(figures(acd.info(third)) == (.wait, 1, 20))  // measured AHT 30, 10 s into the call
    }

    @Test func aCallLongerThanAverageMakesTheAgentDueNow() throws {
        let acd = try ACDHarness(ACDConfiguration(assumedHandleTime: 60))
        let a = try acd.agent("A")
        let first = try acd.dial("1")
        try acd.engine.perform(.accept(rtcId: first), agentId: a)
        let second = try acd.dial("2")
        acd.advance(by: 90)
        #expect(figures(acd.info(second)) == (.wait, 1, 0))
        #expect(figures(acd.info(try acd.dial("3"))) == (.wait, 2, 60))
    }

    @Test func wrapUpCountsInTheEstimate() throws {
        let acd = try ACDHarness(ACDConfiguration(afterCallWork: 10, assumedHandleTime: 50))
        let a = try acd.agent("A")
        let first = try acd.dial("1")
        try acd.engine.perform(.accept(rtcId: first), agentId: a)
        let second = try acd.dial("2")
        let third = try acd.dial("3")
        #expect(figures(acd.info(second)) == (.wait, 1, 60))
        #expect(figures(acd.info(third)) == (.wait, 2, 120))
        acd.advance(by: 50)
        try acd.engine.perform(.hangup(rtcId: first), agentId: a)  // after-call until 60
        #expect(figures(acd.info(second)) == (.wait, 1, 10))
    }

    @Test func positionsAreCountedPerQueue() throws {
        let acd = try ACDHarness(ACDConfiguration(queues: ["default", "Billing"]))
        let d1 = try acd.dial("d1")
        let b1 = try acd.dial("b1", queue: "Billing")
        let d2 = try acd.dial("d2")
        #expect([d1, b1, d2].map { acd.info($0).position } == [1, 1, 2])
        let summary = acd.engine.queueSummaries()
        #expect(summary.defaultQueue == "default")
        #expect(summary.queues.map(\.waiting) == [2, 1])
    }

    @Test func unknownCallsAreNotFound() throws {
        let acd = try ACDHarness()
        #expect(acd.info("rtc-404") == QueueInfoResponse(rtcId: "rtc-404", state: .notFound, position: -1, ewtSeconds: -1))
        #expect(acd.engine.queueSocketGreeting(rtcId: "rtc-404")
            == [.error(code: .unknownRtcId, message: "no call with rtcId \"rtc-404\"")])
        let undialed = acd.engine.issueRtcId()
        #expect(acd.info(undialed).state == .notFound)
    }

    @Test func greetingWhileWaiting() throws {
        let acd = try ACDHarness(ACDConfiguration(queueEntryDelay: 3))
        let call = try acd.dial("J")
        #expect(acd.engine.queueSocketGreeting(rtcId: call) == [.waiting(rtcId: call, queue: "default")])
    }

    @Test func invalidConfigurationsAreRefused() {
        #expect(throws: ACDError.invalidConfiguration("offerTimeout must be > 0")) {
            _ = try ACDEngine(configuration: ACDConfiguration(offerTimeout: 0)) { _ in }
        }
        #expect(throws: ACDError.invalidConfiguration("queue names must be unique")) {
            _ = try ACDEngine(configuration: ACDConfiguration(queues: ["a", "a"])) { _ in }
        }
        #expect((try? ACDConfiguration(queues: ["Billing"], defaultQueue: "default").validated().queues)
            == ["default", "Billing"])
    }

    @Test func reconfigureKeepsQueuesInUse() throws {
        let acd = try ACDHarness(ACDConfiguration(queues: ["default", "Billing"]))
        try acd.dial("J", queue: "Billing")
        #expect(throws: ACDError.invalidConfiguration("queue \"Billing\" is in use and cannot be removed")) {
            try acd.engine.reconfigure { $0.queues = ["default"] }
        }
        try acd.engine.reconfigure { $0.queues.append("Sales"); $0.queueEntryDelay = 4 }
        #expect(acd.engine.configuration.queues == ["default", "Billing", "Sales"])
        let later = try acd.dial("K", queue: "Sales")
        #expect(acd.phase(later) == .entering)
    }
}
