import ECVProtocol
import ECVService
import MediaTestSupport
import Soup
import Testing

extension ServiceTests {
    /// docs/protocol.md §1.7 "A vanished caller": no zombie calls, no agent left busy.
    @Suite("Caller loss") struct CallerLossTests {
        /// A connected call whose caller's queue socket is gone (the process was killed).
        private func connectedCall(_ test: TestService, agent name: String = "Alice") async throws
            -> (call: String, caller: SocketProbe, agent: AgentProbe) {
            let agent = try await test.agent(name)
            let call = try await test.dial()
            let caller = try await test.queueSocket(call)
            _ = try await caller.next(QueueSocketMessage.self)
            _ = try await agent.nextOffer()
            _ = try await agent.nextState()
            #expect(try await agent.request(.accept(rtcId: call), id: "a") == .ack(requestId: "a"))
            #expect(try await agent.next() == .callConnected(rtcId: call, callerName: "Jane Doe"))
            _ = try await agent.nextState() // busy
            return (call, caller, agent)
        }

        @Test func aCallerWhoseSocketsAreGoneEndsItsCallAndFreesTheAgent() async throws {
            let test = try await TestService.start { $0.callerLossTimeout = .milliseconds(800) }
            let (call, caller, agent) = try await connectedCall(test)
            caller.close()
            #expect(try await agent.next() == .callEnded(rtcId: call, reason: .callerLost))
            #expect(try await agent.nextState().state == .ready, "the agent is not left busy")
            #expect(try await test.poll(call) == QueueInfoResponse(rtcId: call, state: .ended, position: -1, ewtSeconds: -1,
                                                                   reason: .callerLost))
            #expect(test.service.log.entries(rtcId: call).contains { $0.message.contains("vanished") })
            await test.stop()
        }

        /// Each phase ends when a witness call, whose caller left after this one's and which nothing
        /// keeps, has been ended as lost: by then this caller would have been lost too.
        @Test func aCallerStaysWhilePollingOrWhileItsSignalingSocketIsRegistered() async throws {
            let test = try await TestService.start { $0.callerLossTimeout = .milliseconds(800) }
            let (call, caller, agent) = try await connectedCall(test)
            let pollingWitness = try await connectedCall(test, agent: "Bob")
            let socketWitness = try await connectedCall(test, agent: "Carol")
            let log = test.service.log.subscribe()
            caller.close()
            try await waitFor(log, "the caller's queue socket closes") { $0.hasPrefix("queue socket of \(call) closed") }
            pollingWitness.caller.close()
            let lost = { @Sendable (witness: String) in
                test.service.log.entries(rtcId: witness).contains { $0.message.contains("the caller of \(witness) vanished") }
            }
            // Polling keeps the caller present…
            let deadline = ContinuousClock.now + .seconds(10)
            while !lost(pollingWitness.call) {
                #expect(try await test.poll(call).state == .agentConnected)
                guard ContinuousClock.now < deadline else { throw TimedOut(what: "the polling witness's caller is lost") }
                try await Task.sleep(for: .milliseconds(300))
            }
            #expect(try await test.poll(call).state == .agentConnected, "polled, unlike the witness that was lost")
            // …and so does its collider socket in the call's room.
            let token = try #require(test.callerToken(call))
            let joined = try #require(try await test.join(call, credential: token).params)
            let collider = try await test.collider(credential: token)
            try collider.send(ColliderCommand.register(roomId: call, clientId: joined.clientId))
            try await waitFor(log, "the caller's registration") { $0.hasPrefix("\(joined.clientId) registered") }
            socketWitness.caller.close()
            try await waitFor(log, "the socket witness's caller is lost") { $0.hasPrefix("the caller of \(socketWitness.call) vanished") }
            #expect(try await test.poll(call).state == .agentConnected, "registered, unlike the witness that was lost")
            collider.close()
            #expect(try await agent.next() == .callEnded(rtcId: call, reason: .callerLost))
            await test.stop()
        }
    }
}
