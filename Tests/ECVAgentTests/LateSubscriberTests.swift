import ECV
import ECVAgent
import ECVTestSupport
import MediaTestSupport
import Testing

/// A bot is handed its call in `callStarted` while the call's media is already starting, so
/// whoever subscribes to the call's events there is always a little late. `ecv agent` waited for
/// `joinedRoom` that way and, under load, for ever.
@Suite(.serialized) struct LateSubscriberTests {
    @Test func aSubscriberAfterTheCallConnectedStillGetsEveryEventOnceInOrder() async throws {
        let backend = try await Backend.start()
        let agent = try await backend.agent()
        let sdk = try backend.sdk()
        let log = EventLog(sdk)
        let c = try await connectedCall(sdk, log, agent: agent)
        let before = c.agentCall.eventHistory
        #expect(before.contains(.joinedRoom(initiator: true)) || before.contains(.joinedRoom(initiator: false)))
        #expect(before.contains(.connected) && before.contains(.textChannelOpen), "\(before)")

        // Subscribed long after those events: the stream starts with them, then goes on live.
        let events = c.agentCall.events()
        c.call.hangup()
        let seen = try await within(15, "the call's events to end with the call") {
            var seen: [AgentCallEvent] = []
            for await event in events { seen.append(event) }
            return seen
        }
        #expect(Array(seen.prefix(before.count)) == before, "the history first, in order: \(seen)")
        #expect(seen == c.agentCall.eventHistory, "then every later event once, ending the stream with the call")
        #expect(seen.last.map { if case .ended = $0 { true } else { false } } == true, "\(seen)")
        await agent.logout()
        await backend.close()
    }
}
