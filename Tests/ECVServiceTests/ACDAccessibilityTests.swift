import ECVProtocol
import ECVService
import Testing

/// Accessibility in the ACD (docs/protocol.md §3.7, §7.5): flags changed while a call waits move
/// it, and a flagged caller goes to an agent who serves accessibility first when one is free.
@Suite("ACD accessibility")
struct ACDAccessibilityTests {
    @Test func newFlagsMoveAWaitingCallAndCanBeTakenBack() throws {
        let acd = try ACDHarness(ACDConfiguration(accessibilityPriority: 10))
        let first = try acd.dial("first")
        acd.advance(by: 1)
        let second = try acd.dial("second")
        #expect([first, second].map { acd.info($0).position } == [1, 2])
        #expect(try acd.engine.setAccessibility(rtcId: second, hearingImpaired: true, visuallyImpaired: false) == 10)
        #expect([first, second].map { acd.info($0).position } == [2, 1])
        #expect(try acd.engine.setAccessibility(rtcId: second, hearingImpaired: false, visuallyImpaired: false) == 0)
        #expect([first, second].map { acd.info($0).position } == [1, 2])
        #expect(throws: ACDError.self) { try acd.engine.setAccessibility(rtcId: "rtc-404", hearingImpaired: true, visuallyImpaired: true) }
    }

    @Test func aFlaggedCallerGoesToAnAgentWhoServesAccessibilityElseToTheLongestIdle() throws {
        let acd = try ACDHarness()
        let plainAgent = try acd.agent("A")
        acd.advance(by: 5)
        let servingAgent = try acd.engine.login(name: "B", servesAccessibility: true).agentId
        try acd.engine.perform(.ready(queues: ["default"]), agentId: servingAgent)
        _ = acd.takeEvents()
        let impaired = try acd.dial("impaired", acd: [ACDAttributeKey.visuallyImpaired: "true"])
        #expect(ACDHarness.offers(to: servingAgent, in: acd.takeEvents()) == [impaired])
        // A has been idle longest and takes the next, unflagged, caller.
        let plain = try acd.dial("plain")
        #expect(ACDHarness.offers(to: plainAgent, in: acd.takeEvents()) == [plain])
        // With the serving agent busy, a flagged caller is not kept waiting for it.
        try acd.engine.perform(.accept(rtcId: impaired), agentId: servingAgent)
        try acd.engine.perform(.reject(rtcId: plain), agentId: plainAgent)
        _ = acd.takeEvents()
        let another = try acd.dial("another impaired", acd: [ACDAttributeKey.hearingImpaired: "true"])
        #expect(ACDHarness.offers(to: plainAgent, in: acd.takeEvents()) == [another])
    }
}
