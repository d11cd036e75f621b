import ECVProtocol
import ECVService
import Foundation
import MediaTestSupport
import Soup
import Testing

extension ServiceTests {
    @Suite("Queue socket") struct QueueSocketTests {
        /// dial → agent accepts → transfer pending → cancelled → transfer to a queue → completed with
        /// a new rtcId → the new leg connects and ends: every push, in order, with the close codes.
        @Test func aScriptedCallPushesEveryTransitionInOrder() async throws {
            let test = try await TestService.start { $0.queues = ["default", "Billing"] }
            let alice = try await test.agent("Alice")
            let bob = try await test.agent("Bob", ready: ["Billing"])
            let call = try await test.rtcId()
            let socket = try await test.queueSocket(call)
            // Greeting before DialEx: the call does not exist yet.
            #expect(try await socket.next(QueueSocketMessage.self)
                == .error(code: .unknownRtcId, message: "no call with rtcId \"\(call)\""))
            #expect(try await socket.nextClose().code == ECVCloseCode.notFound)

            #expect(try await test.post(ECVAPI.dialEx, json: DialExRequest(rtcId: call, callerName: "Jane Doe")).status == 200)
            let caller = try await test.queueSocket(call)
            // Alice was ready first: the call rings at her before (or while) the socket opens.
            #expect(try await caller.next(QueueSocketMessage.self) == .waiting(rtcId: call, queue: "default"))
            let offer = try await alice.nextOffer()
            #expect(offer.rtcId == call && offer.callerName == "Jane Doe" && offer.timeoutSeconds == 15)
            #expect(try await alice.nextState().state == .ringing)
            #expect(try await alice.request(.accept(rtcId: call), id: "1") == .ack(requestId: "1"))
            #expect(try await caller.next(QueueSocketMessage.self)
                == .agentConnected(rtcId: call, agentId: alice.id, agentName: "Alice"))
            #expect(try await alice.next() == .callConnected(rtcId: call, callerName: "Jane Doe"))
            #expect(try await alice.nextState() == AgentStateUpdate(agentId: alice.id, state: .busy, queues: ["default"], rtcId: call))

            // A direct transfer to Bob, then cancelled.
            #expect(try await alice.request(.transfer(rtcId: call, target: .agent(bob.id)), id: "2") == .ack(requestId: "2"))
            #expect(try await caller.next(QueueSocketMessage.self) == .transferPending(rtcId: call, target: .agent(bob.id)))
            #expect(try await alice.next() == .transferPending(rtcId: call, target: .agent(bob.id)))
            let transferOffer = try await bob.nextOffer()
            #expect(transferOffer.transfer == TransferOrigin(fromAgentId: alice.id, fromRtcId: call))
            #expect(transferOffer.rtcId != call)
            #expect(try await bob.nextState().state == .ringing)
            #expect(try await test.poll(call).state == .transferPending)
            #expect(try await alice.request(.cancelTransfer(rtcId: call), id: "3") == .ack(requestId: "3"))
            #expect(try await caller.next(QueueSocketMessage.self) == .transferCancelled(rtcId: call, reason: .cancelled))
            #expect(try await alice.next() == .transferCancelled(rtcId: call, reason: .cancelled))
            #expect(try await bob.next() == .offerWithdrawn(rtcId: transferOffer.rtcId, reason: .cancelled))
            #expect(try await bob.nextState().state == .ready)
            #expect(try await test.poll(call).state == .agentConnected)

            // A blind transfer to Billing: pending and completed at once, then the socket closes.
            #expect(try await alice.request(.transfer(rtcId: call, target: .queue("Billing")), id: "4") == .ack(requestId: "4"))
            #expect(try await caller.next(QueueSocketMessage.self) == .transferPending(rtcId: call, target: .queue("Billing")))
            let completed = try await caller.next(QueueSocketMessage.self)
            guard case .transferCompleted(call, let newRtcId) = completed else {
                Issue.record("expected transfer_completed, got \(completed)")
                return
            }
            test.inherit(newRtcId, from: call)
            #expect(try await caller.nextClose().code == ECVCloseCode.normal)
            #expect(try await test.poll(call) == QueueInfoResponse(rtcId: call, state: .transferred, position: -1,
                                                                   ewtSeconds: -1, newRtcId: newRtcId))

            // The new leg rings at Bob; the caller waits on it without dialing.
            let newLegOffer = try await bob.nextOffer()
            #expect(newLegOffer.rtcId == newRtcId && newLegOffer.queue == "Billing" && newLegOffer.transfer == nil)
            _ = try await bob.nextState()
            let newLeg = try await test.queueSocket(newRtcId)
            #expect(try await newLeg.next(QueueSocketMessage.self) == .waiting(rtcId: newRtcId, queue: "Billing"))
            #expect(try await bob.request(.accept(rtcId: newRtcId), id: "5") == .ack(requestId: "5"))
            #expect(try await newLeg.next(QueueSocketMessage.self)
                == .agentConnected(rtcId: newRtcId, agentId: bob.id, agentName: "Bob"))
            #expect(try await bob.next() == .callConnected(rtcId: newRtcId, callerName: "Jane Doe"))
            #expect(try await bob.nextState().state == .busy)
            #expect(try await bob.request(.hangup(rtcId: newRtcId), id: "6") == .ack(requestId: "6"))
            #expect(try await newLeg.next(QueueSocketMessage.self) == .callEnded(rtcId: newRtcId, reason: .agentHangup))
            #expect(try await newLeg.nextClose().code == ECVCloseCode.normal)

            // A transferred leg is never dialed, and cannot be.
            #expect(test.service.script.dialCount(rtcId: newRtcId) == 0)
            let dialNewLeg = try await test.post(ECVAPI.dialEx, json: DialExRequest(rtcId: newRtcId, callerName: "Jane Doe"))
            #expect(try test.error(dialNewLeg, status: 409).code == .alreadyDialed)
            await test.stop()
        }

        @Test func greetingsCarryTheCurrentStateOfEachPhase() async throws {
            let test = try await TestService.start()
            let call = try await test.dial()
            let agent = try await test.agent("Alice")
            _ = try await agent.nextOffer()
            _ = try await agent.nextState()
            let ringing = try await test.queueSocket(call)
            #expect(try await ringing.next(QueueSocketMessage.self) == .waiting(rtcId: call, queue: "default"))
            #expect(try await agent.request(.accept(rtcId: call), id: "a") == .ack(requestId: "a"))
            #expect(try await ringing.next(QueueSocketMessage.self) == .agentConnected(rtcId: call, agentId: agent.id,
                                                                                      agentName: "Alice"))
            // A newer socket replaces the older (4409, no terminal push) and greets with the state.
            let newer = try await test.queueSocket(call)
            #expect(try await newer.next(QueueSocketMessage.self) == .agentConnected(rtcId: call, agentId: agent.id,
                                                                                    agentName: "Alice"))
            #expect(try await ringing.nextClose().code == ECVCloseCode.replaced)
            #expect(try await test.hangup(call).status == 200)
            #expect(try await newer.next(QueueSocketMessage.self) == .callEnded(rtcId: call, reason: .callerHangup))
            #expect(try await newer.nextClose().code == ECVCloseCode.normal)
            // An ended call still answers with its outcome while remembered.
            let late = try await test.queueSocket(call)
            #expect(try await late.next(QueueSocketMessage.self) == .callEnded(rtcId: call, reason: .callerHangup))
            #expect(try await late.nextClose().code == ECVCloseCode.normal)
            await test.stop()
        }

        @Test func missingRtcIdClosesWith4400() async throws {
            let test = try await TestService.start()
            let socket = try await SocketProbe.connect(test.ws + ECVAPI.queueSocket)
            #expect(try await socket.nextClose().code == ECVCloseCode.badRequest)
            await test.stop()
        }

        @Test func textFromTheClientIsIgnored() async throws {
            let test = try await TestService.start()
            let call = try await test.dial()
            let socket = try await test.queueSocket(call)
            #expect(try await socket.next(QueueSocketMessage.self) == .waiting(rtcId: call, queue: "default"))
            try socket.connection.send(text: "hello?")
            try socket.connection.send(text: "{\"type\":\"call_ended\"}")
            #expect(try await test.hangup(call).status == 200)
            #expect(try await socket.next(QueueSocketMessage.self) == .callEnded(rtcId: call, reason: .callerHangup))
            await test.stop()
        }

        @Test func droppingTheSocketSendsNoTerminalPush() async throws {
            let test = try await TestService.start()
            let call = try await test.dial()
            let socket = try await test.queueSocket(call)
            #expect(try await socket.next(QueueSocketMessage.self) == .waiting(rtcId: call, queue: "default"))
            #expect(test.service.queueSocketRtcIds == [call])
            #expect(test.service.script.dropQueueSocket(rtcId: call))
            let close = try await socket.nextClose()
            #expect(close.code == 1011 && close.reason == "dropped by script")
            #expect(!test.service.script.dropQueueSocket(rtcId: call))
            #expect(try await test.poll(call).state == .wait, "the call itself goes on")
            await test.stop()
        }

        @Test func stoppingTheServiceEndsCallsAndClosesSockets() async throws {
            let test = try await TestService.start()
            let call = try await test.dial()
            let agent = try await test.agent("Alice")
            _ = try await agent.nextOffer()
            _ = try await agent.nextState()
            #expect(try await agent.request(.accept(rtcId: call), id: "a") == .ack(requestId: "a"))
            let socket = try await test.queueSocket(call)
            #expect(try await socket.next(QueueSocketMessage.self).kind == .agentConnected)
            let idleCollider = try await test.collider()
            // The client sees the upgrade before the service has registered the socket; stopping
            // in between would drop it without a close frame.
            try await eventually(.seconds(5), "the service counts the agent, queue and collider sockets") {
                test.service.openSocketCount == 3
            }
            await test.stop()
            #expect(try await socket.next(QueueSocketMessage.self) == .callEnded(rtcId: call, reason: .serviceShutdown))
            #expect(try await socket.nextClose().code == ECVCloseCode.normal)
            var agentEvents: [AgentEvent] = []
            while true {
                let event = try await agent.socket.next()
                if case .closed(let code, _) = event {
                    #expect(code == ECVCloseCode.goingAway)
                    break
                }
                guard case .text(let text) = event else { continue }
                agentEvents.append(try ECVJSON.decode(AgentEvent.self, from: text))
            }
            #expect(agentEvents.first == .callConnected(rtcId: call, callerName: "Jane Doe"))
            #expect(agentEvents.contains(.callEnded(rtcId: call, reason: .serviceShutdown)))
            #expect(try await idleCollider.nextClose().code == ECVCloseCode.goingAway)
            #expect(test.service.openSocketCount == 0)
        }
    }

    @Suite("v1.5 and v1.75 backends") struct BackendVersionTests {
        @Test func aV15BackendPollsOnly() async throws {
            let test = try await TestService.start { $0.backendVersion = .v1_5 }
            let call = try await test.dial()
            do {
                _ = try await WebSocketClient.connect(url: test.ws + ECVAPI.queueSocket + "?rtcId=" + call)
                Issue.record("a v1.5 backend has no queue socket")
            } catch let HTTPError.webSocketRejected(_, status, _) {
                #expect(status == 404)
            }
            #expect(try test.error(try await test.get(ECVAPI.waitForRoomQueueInterval + "?rtcId=" + call), status: 404).code
                == "NOT_FOUND")
            #expect(try await test.get(ECVAPI.queues).status == 404)
            #expect(try await test.poll(call, queueInfo: false) == QueueInfoResponse(rtcId: call, state: .wait))

            let alice = try await test.agent("Alice")
            let bob = try await test.agent("Bob")
            _ = try await alice.nextOffer()
            _ = try await alice.nextState()
            #expect(try await alice.request(.accept(rtcId: call), id: "a") == .ack(requestId: "a"))
            _ = try await alice.next() // call_connected
            _ = try await alice.nextState() // busy
            let refused = try await alice.request(.transfer(rtcId: call, target: .agent(bob.id)), id: "t")
            #expect(refused == .error(requestId: "t", code: .transferUnsupported, message: "this service does not support call transfer"))
            #expect(try await test.poll(call, queueInfo: false) == QueueInfoResponse(rtcId: call, state: .agentConnected))
            #expect(try await alice.request(.hangup(rtcId: call), id: "h") == .ack(requestId: "h"))
            #expect(try await test.poll(call, queueInfo: false) == QueueInfoResponse(rtcId: call, state: .ended, reason: .agentHangup))
            await test.stop()
        }

        @Test func aV175BackendServesEverything() async throws {
            let test = try await TestService.start()
            let call = try await test.dial()
            let socket = try await test.queueSocket(call)
            #expect(try await socket.next(QueueSocketMessage.self) == .waiting(rtcId: call, queue: "default"))
            #expect(try await test.get(ECVAPI.queues).status == 200)
            #expect(try await test.poll(call) == QueueInfoResponse(rtcId: call, state: .wait, position: 1, ewtSeconds: -1))
            await test.stop()
        }
    }
}
