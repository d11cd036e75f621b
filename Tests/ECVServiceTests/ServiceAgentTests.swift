import ECVProtocol
import ECVService
import Foundation
import Soup
import Testing

extension ServiceTests {
    @Suite("Agent API and socket") struct AgentTests {
        @Test func loginChecksTheSecretAndLogoutForgetsTheAgent() async throws {
            let test = try await TestService.start { $0.agentSecrets = ["s3cret"] }
            let noSecret = try await test.post(ECVAPI.agentLogin, json: AgentLoginRequest(name: "Alice"))
            #expect(try test.error(noSecret, status: 401).code == .unauthorized)
            let wrong = try await test.post(ECVAPI.agentLogin, json: AgentLoginRequest(name: "Alice", secret: "nope"))
            #expect(try test.error(wrong, status: 401).code == .unauthorized)
            #expect(try test.error(try await test.post(ECVAPI.agentLogin, body: #"{"name":""}"#), status: 400).field == "name")
            let login = try await test.login("Alice", secret: "s3cret")
            #expect(login == AgentLoginResponse(agentId: "agent-1", token: "token-1"))

            #expect(try test.error(try await test.post(ECVAPI.agentLogout), status: 401).code == .unauthorized)
            let logout = try await test.post(ECVAPI.agentLogout, headers: ["Authorization": "Bearer \(login.token)"])
            #expect(try test.decode(AgentLogoutResponse.self, logout) == AgentLogoutResponse(agentId: "agent-1"))
            let again = try await test.post(ECVAPI.agentLogout, headers: ["Authorization": "Bearer \(login.token)"])
            #expect(again.status == 401, "the token is forgotten")
            await test.stop()
        }

        @Test func socketRefusesWrongTokensAndUnknownAgents() async throws {
            let test = try await TestService.start()
            let login = try await test.login("Alice")
            let path = test.ws + ECVAPI.agentSocket
            let wrongToken = try await SocketProbe.connect(path + "?agentId=\(login.agentId)&token=nope")
            #expect(try await wrongToken.next(AgentEvent.self) == .error(requestId: nil, code: .unauthorized,
                                                                          message: "the agent token is not valid"))
            #expect(try await wrongToken.nextClose().code == ECVCloseCode.unauthorized)
            let noToken = try await SocketProbe.connect(path + "?agentId=\(login.agentId)")
            #expect(try await noToken.next(AgentEvent.self) == .error(requestId: nil, code: .unauthorized,
                                                                       message: "the agent token is missing"))
            #expect(try await noToken.nextClose().code == ECVCloseCode.unauthorized)
            let unknown = try await SocketProbe.connect(path + "?agentId=agent-99&token=\(login.token)")
            #expect(try await unknown.next(AgentEvent.self) == .error(requestId: nil, code: .unknownAgent,
                                                                       message: "unknown agent \"agent-99\""))
            #expect(try await unknown.nextClose().code == ECVCloseCode.notFound)
            // The bearer header works too, and a refused socket did not log the agent out.
            let bearer = try await SocketProbe.connect(path, headers: ["Authorization": "Bearer \(login.token)"])
            #expect(try await bearer.next(AgentEvent.self) == .agentState(AgentStateUpdate(agentId: login.agentId,
                                                                                           state: .notReady, queues: [])))
            await test.stop()
        }

        /// docs/protocol.md §1.3: a DialEx without the Danamon attached data reaches the agent's
        /// socket with the seed's backward-compatibility defaults; a queue's own defaults win there.
        @Test func anOfferShowsTheSeedsDefaultsForADialWithoutAttachedData() async throws {
            let test = try await TestService.start {
                $0.queues = ["default", "Billing"]
                $0.acd.queueAttributeDefaults = ["Billing": ["video_language": "en", "video_flow": "ETB"]]
            }
            let alice = try await test.agent("Alice")
            let bob = try await test.agent("Bob", ready: ["Billing"])
            let call = try await test.dial()
            let offer = try await alice.nextOffer()
            #expect(offer.rtcId == call)
            #expect(offer.attributes == ["video_flow": "NTB", "video_channel": "Saving (1.0)",
                                         "video_application": "DBP 1.0", "video_language": "id"])
            let billing = try await test.dial(queue: "Billing")
            let billingOffer = try await bob.nextOffer()
            #expect(billingOffer.rtcId == billing)
            #expect(billingOffer.attributes == ["video_language": "en", "video_flow": "ETB"])
            await test.stop()
        }

        @Test func aNewerSocketReplacesTheOlderWithoutLoggingOut() async throws {
            let test = try await TestService.start()
            let agent = try await test.agent("Alice")
            let newer = try await SocketProbe.connect(test.ws + ECVAPI.agentSocket + "?agentId=\(agent.id)&token=\(agent.token)")
            #expect(try await newer.next(AgentEvent.self) == .agentState(AgentStateUpdate(agentId: agent.id, state: .ready,
                                                                                          queues: ["default"])))
            #expect(try await agent.socket.nextClose().code == ECVCloseCode.replaced)
            let call = try await test.dial()
            #expect(try await newer.next(AgentEvent.self).kind == .offer, "the agent is still logged in and ready")
            #expect(try await test.poll(call).state == .wait)
            await test.stop()
        }

        @Test func requestsAreAnsweredByRequestId() async throws {
            let test = try await TestService.start()
            let agent = try await test.agent("Alice", ready: nil)
            #expect(try await agent.request(.ready(queues: ["Nowhere"]), id: "1")
                == .error(requestId: "1", code: .unknownQueue, message: "unknown queue \"Nowhere\""))
            #expect(try await agent.request(.accept(rtcId: "rtc-9"), id: "2")
                == .error(requestId: "2", code: .invalidState, message: "no offer of \"rtc-9\" is ringing at agent \"\(agent.id)\""))
            #expect(try await agent.request(.hangup(rtcId: "rtc-9"), id: "3")
                == .error(requestId: "3", code: .unknownRtcId, message: "unknown rtcId \"rtc-9\""))
            try agent.socket.connection.send(text: #"{"type":"transfer","rtcId":"rtc-2","requestId":"4"}"#)
            #expect(try await agent.next() == .error(requestId: "4", code: .badRequest, message: "missing field 'target'"))
            try agent.socket.connection.send(text: "not json at all")
            guard case .error(nil, .badRequest, _) = try await agent.next() else {
                Issue.record("a non-JSON frame must get a BAD_REQUEST error")
                return
            }
            try agent.socket.connection.send(text: #"{"type":"dance","requestId":"5"}"#)
            guard case .error("5", .badRequest, let message) = try await agent.next() else {
                Issue.record("an unknown command must get a BAD_REQUEST error")
                return
            }
            #expect(message.contains("type"))
            // A silent success (no requestId): only the state change arrives.
            try agent.send(.ready(queues: []))
            #expect(try await agent.nextState() == AgentStateUpdate(agentId: agent.id, state: .ready, queues: ["default"]))
            await test.stop()
        }

        @Test func rejectReoffersToAnotherAgentAndAcceptConnectsTheCaller() async throws {
            let test = try await TestService.start()
            let alice = try await test.agent("Alice")
            let bob = try await test.agent("Bob")
            let call = try await test.dial()
            let caller = try await test.queueSocket(call)
            #expect(try await caller.next(QueueSocketMessage.self) == .waiting(rtcId: call, queue: "default"))
            // Alice became ready first: she has been idle longest.
            #expect(try await alice.nextOffer().rtcId == call)
            #expect(try await alice.nextState().state == .ringing)
            #expect(try await alice.request(.reject(rtcId: call), id: "r") == .ack(requestId: "r"))
            #expect(try await alice.nextState() == AgentStateUpdate(agentId: alice.id, state: .ready, queues: ["default"]))
            #expect(try await bob.nextOffer().rtcId == call)
            #expect(try await bob.nextState().state == .ringing)
            #expect(try await bob.request(.accept(rtcId: call), id: "a") == .ack(requestId: "a"))
            #expect(try await caller.next(QueueSocketMessage.self) == .agentConnected(rtcId: call, agentId: bob.id, agentName: "Bob"))
            #expect(try await bob.next() == .callConnected(rtcId: call, callerName: "Jane Doe"))
            #expect(try await bob.nextState() == AgentStateUpdate(agentId: bob.id, state: .busy, queues: ["default"], rtcId: call))

            // The caller hangs up: the agent learns it from call_ended and is ready again.
            #expect(try await test.hangup(call).status == 200)
            #expect(try await caller.next(QueueSocketMessage.self) == .callEnded(rtcId: call, reason: .callerHangup))
            #expect(try await bob.next() == .callEnded(rtcId: call, reason: .callerHangup))
            #expect(try await bob.nextState().state == .ready)
            // Alice was never offered it again.
            let next = try await test.dial("Second")
            #expect(try await alice.nextOffer().rtcId == next)
            await test.stop()
        }

        @Test func agentHangupEndsTheCallOnBothSides() async throws {
            let test = try await TestService.start()
            let agent = try await test.agent("Alice")
            let call = try await test.dial()
            let caller = try await test.queueSocket(call)
            _ = try await caller.next(QueueSocketMessage.self)
            _ = try await agent.nextOffer()
            _ = try await agent.nextState()
            #expect(try await agent.request(.accept(rtcId: call), id: "a") == .ack(requestId: "a"))
            #expect(try await caller.next(QueueSocketMessage.self).kind == .agentConnected)
            _ = try await agent.next()
            _ = try await agent.nextState()
            #expect(try await agent.request(.hangup(rtcId: call), id: "h") == .ack(requestId: "h"))
            #expect(try await agent.next() == .callEnded(rtcId: call, reason: .agentHangup))
            #expect(try await agent.nextState().state == .ready)
            #expect(try await caller.next(QueueSocketMessage.self) == .callEnded(rtcId: call, reason: .agentHangup))
            #expect(try await caller.nextClose().code == ECVCloseCode.normal)
            #expect(try await test.poll(call).reason == .agentHangup)
            await test.stop()
        }

        @Test func losingTheAgentSocketLogsOutAndEndsItsCall() async throws {
            let test = try await TestService.start()
            let agent = try await test.agent("Alice")
            let call = try await test.dial()
            let caller = try await test.queueSocket(call)
            _ = try await caller.next(QueueSocketMessage.self)
            _ = try await agent.nextOffer()
            _ = try await agent.nextState()
            #expect(try await agent.request(.accept(rtcId: call), id: "a") == .ack(requestId: "a"))
            #expect(try await caller.next(QueueSocketMessage.self).kind == .agentConnected)
            agent.socket.close()
            #expect(try await caller.next(QueueSocketMessage.self) == .callEnded(rtcId: call, reason: .agentLost))
            let reconnect = try await SocketProbe.connect(test.ws + ECVAPI.agentSocket + "?agentId=\(agent.id)&token=\(agent.token)")
            #expect(try await reconnect.next(AgentEvent.self).kind == .error)
            #expect(try await reconnect.nextClose().code == ECVCloseCode.notFound, "the agent must log in again")
            #expect(test.service.acd.snapshot().agents.isEmpty)
            await test.stop()
        }

        @Test func transferToAnAgentRefusedThenCompleted() async throws {
            let test = try await TestService.start()
            let alice = try await test.agent("Alice")
            let call = try await test.dial()
            let caller = try await test.queueSocket(call)
            _ = try await caller.next(QueueSocketMessage.self)
            _ = try await alice.nextOffer()
            _ = try await alice.nextState()
            #expect(try await alice.request(.accept(rtcId: call), id: "a") == .ack(requestId: "a"))
            _ = try await caller.next(QueueSocketMessage.self)
            _ = try await alice.next()
            _ = try await alice.nextState()
            let bob = try await test.agent("Bob")

            // Not ready or unknown targets are refused at once.
            #expect(try await alice.request(.transfer(rtcId: call, target: .agent(alice.id)), id: "self")
                == .error(requestId: "self", code: .targetUnavailable, message: "agent \"\(alice.id)\" is not ready to take a transfer"))
            #expect(try await alice.request(.transfer(rtcId: call, target: .agent("agent-99")), id: "x")
                == .error(requestId: "x", code: .unknownAgent, message: "unknown agent \"agent-99\""))

            // Bob refuses.
            #expect(try await alice.request(.transfer(rtcId: call, target: .agent(bob.id)), id: "t1") == .ack(requestId: "t1"))
            #expect(try await caller.next(QueueSocketMessage.self) == .transferPending(rtcId: call, target: .agent(bob.id)))
            _ = try await alice.next()
            let refusedOffer = try await bob.nextOffer()
            _ = try await bob.nextState()
            #expect(try await bob.request(.reject(rtcId: refusedOffer.rtcId), id: "r") == .ack(requestId: "r"))
            #expect(try await caller.next(QueueSocketMessage.self) == .transferCancelled(rtcId: call, reason: .refused))
            #expect(try await alice.next() == .transferCancelled(rtcId: call, reason: .refused))
            #expect(try await bob.nextState().state == .ready)

            // Bob accepts the second try: the old leg completes, the new one is connected at once.
            #expect(try await alice.request(.transfer(rtcId: call, target: .agent(bob.id)), id: "t2") == .ack(requestId: "t2"))
            #expect(try await caller.next(QueueSocketMessage.self) == .transferPending(rtcId: call, target: .agent(bob.id)))
            _ = try await alice.next()
            let offer = try await bob.nextOffer()
            _ = try await bob.nextState()
            #expect(try await bob.request(.accept(rtcId: offer.rtcId), id: "acc") == .ack(requestId: "acc"))
            #expect(try await caller.next(QueueSocketMessage.self) == .transferCompleted(rtcId: call, newRtcId: offer.rtcId))
            #expect(try await caller.nextClose().code == ECVCloseCode.normal)
            #expect(try await alice.next() == .transferCompleted(rtcId: call, newRtcId: offer.rtcId))
            #expect(try await alice.nextState().state == .ready)
            #expect(try await bob.next() == .callConnected(rtcId: offer.rtcId, callerName: "Jane Doe"))
            test.inherit(offer.rtcId, from: call)
            let newLeg = try await test.queueSocket(offer.rtcId)
            #expect(try await newLeg.next(QueueSocketMessage.self) == .agentConnected(rtcId: offer.rtcId, agentId: bob.id,
                                                                                     agentName: "Bob"))
            #expect(test.service.script.dialCount(rtcId: offer.rtcId) == 0)
            await test.stop()
        }
    }
}
