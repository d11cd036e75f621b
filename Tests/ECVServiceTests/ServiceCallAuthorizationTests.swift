import ECVProtocol
import ECVService
import Soup
import Testing

extension ServiceTests {
    /// docs/protocol.md §1.9: an outsider who knows only a call's rtcId can neither end, watch nor
    /// join it, and the room's slots belong to the caller and to the call's agent.
    @Suite("Call authorization") struct CallAuthorizationTests {
        /// A queued call with its caller's queue socket open, and an agent that is not ready yet.
        private func queuedCall(_ test: TestService) async throws -> (call: String, caller: SocketProbe) {
            let call = try await test.dial()
            let caller = try await test.queueSocket(call)
            #expect(try await caller.next(QueueSocketMessage.self) == .waiting(rtcId: call, queue: "default"))
            return (call, caller)
        }

        @Test func dialExIssuesACallerTokenUnlessExplicitlySwitchedOff() async throws {
            let secured = try await TestService.start()
            let call = try await secured.dial()
            let token = try #require(secured.callerToken(call))
            #expect(!token.isEmpty && token != call)
            await secured.stop()

            let open = try await TestService.start(callerTokens: false)
            let rtcId = try await open.rtcId()
            let answer = try open.decode(DialExResponse.self, try await open.post(ECVAPI.dialEx, json: DialExRequest(rtcId: rtcId, callerName: "J")))
            #expect(answer.callerToken == nil)
            // Without tokens the service is open: the rtcId alone acts for the caller.
            #expect(try await open.post(ECVAPI.hangup, json: HangupRequest(rtcId: rtcId)).status == 200)
            await open.stop()
        }

        @Test func hangupNeedsTheCallersToken() async throws {
            let test = try await TestService.start()
            let (call, caller) = try await queuedCall(test)
            let missing = try await test.post(ECVAPI.hangup, json: HangupRequest(rtcId: call))
            #expect(try test.error(missing, status: 401).code == .unauthorized)
            let agent = try await test.login("Mallory")
            let wrong = try await test.post(ECVAPI.hangup, json: HangupRequest(rtcId: call),
                                            headers: [ECVAPI.callTokenHeader: agent.token])
            #expect(try test.error(wrong, status: 403).code == .forbidden)
            #expect(try await test.poll(call).state == .wait, "the refused hangups changed nothing")
            #expect(try await test.hangup(call).status == 200)
            #expect(try await caller.next(QueueSocketMessage.self) == .callEnded(rtcId: call, reason: .callerHangup))
            await test.stop()
        }

        @Test func pollingNeedsTheCallersTokenButUnknownCallsStayUnknown() async throws {
            let test = try await TestService.start()
            let (call, _) = try await queuedCall(test)
            let bare = try await test.get(ECVAPI.waitForRoomQueueInterval + "?rtcId=" + call)
            #expect(try test.error(bare, status: 401).code == .unauthorized)
            let legacy = try await test.get(ECVAPI.waitForRoomInterval + "?rtcId=" + call,
                                            headers: [ECVAPI.callTokenHeader: "guess"])
            #expect(try test.error(legacy, status: 403).code == .forbidden)
            // The query parameter works too (what a browser sends).
            let token = try #require(test.callerToken(call))
            let byQuery = try await test.get(ECVAPI.waitForRoomQueueInterval + "?rtcId=" + call + "&token=" + token)
            #expect(try test.decode(QueueInfoResponse.self, byQuery).state == .wait)
            #expect(try await test.poll("never-issued").state == .notFound)
            await test.stop()
        }

        /// The outsider's socket is refused before it attaches: the caller's socket stays, hears
        /// the pickup, and the outsider learns neither agent nor outcome.
        @Test func anOutsidersQueueSocketIsRefusedAndTheCallersStays() async throws {
            let test = try await TestService.start()
            let (call, caller) = try await queuedCall(test)
            let outsider = try await SocketProbe.connect(test.ws + ECVAPI.queueSocket + "?rtcId=" + call)
            #expect(try await outsider.next(QueueSocketMessage.self).kind == .error)
            #expect(try await outsider.nextClose().code == ECVCloseCode.unauthorized)
            let guessing = try await SocketProbe.connect(test.ws + ECVAPI.queueSocket + "?rtcId=" + call + "&token=guess")
            #expect(try await guessing.next(QueueSocketMessage.self) == .error(code: .forbidden,
                                                                               message: "the queue socket needs this call's caller token"))
            #expect(try await guessing.nextClose().code == ECVCloseCode.unauthorized)
            #expect(test.service.queueSocketRtcIds == [call])

            let alice = try await test.agent("Alice")
            _ = try await alice.nextOffer()
            _ = try await alice.nextState()
            #expect(try await alice.request(.accept(rtcId: call), id: "a") == .ack(requestId: "a"))
            #expect(try await caller.next(QueueSocketMessage.self)
                == .agentConnected(rtcId: call, agentId: alice.id, agentName: "Alice"))
            await test.stop()
        }

        @Test func roomSlotsBelongToTheCallerAndToTheCallsAgent() async throws {
            let test = try await TestService.start()
            let (call, _) = try await queuedCall(test)
            let token = try #require(test.callerToken(call))
            // Before any agent: an outsider's join is refused and takes no slot.
            #expect(try test.error(try await test.post(ECVAPI.joinPath(room: call)), status: 401).code == .unauthorized)
            let mallory = try await test.agent("Mallory", ready: nil)
            let byOtherAgent = try await test.post(ECVAPI.joinPath(room: call), headers: [ECVAPI.callTokenHeader: mallory.token])
            #expect(try test.error(byOtherAgent, status: 403).code == .forbidden)
            #expect(test.service.roomCount == 0, "refused joins create no room")

            let alice = try await test.agent("Alice")
            _ = try await alice.nextOffer()
            _ = try await alice.nextState()
            _ = try await alice.request(.accept(rtcId: call), id: "a")
            let agentSide = try #require(try await test.join(call, credential: alice.token).params)
            #expect(agentSide.isInitiator)
            // The agent's token cannot take the caller's slot too (joining again gives back its
            // own slot: a retried join); the caller's still can.
            #expect(try await test.join(call, credential: alice.token).params?.clientId == agentSide.clientId)
            let callerSide = try #require(try await test.join(call, credential: token).params)
            #expect(!callerSide.isInitiator)
            #expect(try await test.join(call, credential: token).params?.clientId == callerSide.clientId)
            #expect(test.service.roomCount == 1)
            // Another agent's token is no party of this call.
            let late = try await test.post(ECVAPI.joinPath(room: call), headers: [ECVAPI.callTokenHeader: mallory.token])
            #expect(try test.error(late, status: 403).code == .forbidden)
            await test.stop()
        }

        /// A forged `bye` (or any payload) for a client is refused unless it comes with that
        /// client's slot credential; the agent hears nothing and the call stays connected.
        @Test func payloadsAreAcceptedOnlyFromTheSlotsOwner() async throws {
            let test = try await TestService.start()
            let (call, caller) = try await queuedCall(test)
            let token = try #require(test.callerToken(call))
            let alice = try await test.agent("Alice")
            _ = try await alice.nextOffer()
            _ = try await alice.nextState()
            _ = try await alice.request(.accept(rtcId: call), id: "a")
            _ = try await caller.next(QueueSocketMessage.self) // agent_connected
            let agentSide = try #require(try await test.join(call, credential: alice.token).params)
            let callerSide = try #require(try await test.join(call, credential: token).params)
            let agentSocket = try await test.collider(credential: alice.token)
            let log = test.service.log.subscribe()
            try agentSocket.send(ColliderCommand.register(roomId: call, clientId: agentSide.clientId))
            try await waitFor(log, "the agent's registration") { $0.hasPrefix("\(agentSide.clientId) registered") }

            let bye = try ECVJSON.encodeString(SignalingMessage.bye)
            // No credential, another agent's, and the caller's own token speaking as the agent's client.
            let mallory = try await test.login("Mallory")
            let forged: [(String, HTTPHeaders, Int)] = [
                (ECVAPI.messagePath(room: call, client: callerSide.clientId), [:], 401),
                (ECVAPI.messagePath(room: call, client: callerSide.clientId), [ECVAPI.callTokenHeader: mallory.token], 403),
                (ECVAPI.colliderPostPath(room: call, client: callerSide.clientId), [:], 401),
                (ECVAPI.messagePath(room: call, client: agentSide.clientId), [ECVAPI.callTokenHeader: token], 403),
                (ECVAPI.colliderPostPath(room: call, client: agentSide.clientId), [ECVAPI.callTokenHeader: token], 403),
                (ECVAPI.leavePath(room: call, client: callerSide.clientId), [:], 401),
            ]
            for (path, headers, status) in forged {
                let response = try await test.post(path, body: bye, headers: headers)
                #expect(response.status == status, "\(path) with \(headers): \(response.text ?? "")")
            }
            let deleted = try await test.client.send(HTTPRequest(method: "DELETE",
                                                                 url: test.base + ECVAPI.colliderPostPath(room: call, client: agentSide.clientId)))
            #expect(deleted.status == 401)
            // The caller's own bye, with its token, is the first thing the agent's socket receives.
            let genuine = try await test.post(ECVAPI.messagePath(room: call, client: callerSide.clientId), body: bye,
                                              headers: [ECVAPI.callTokenHeader: token])
            #expect(try test.decode(RoomResponse.self, genuine).result == .success)
            #expect(try await agentSocket.next(ColliderDelivery.self) == .message(.bye))
            #expect(try await test.poll(call).state == .agentConnected)
            await test.stop()
        }

        @Test func colliderRegistrationNeedsTheSlotsCredential() async throws {
            let test = try await TestService.start()
            let (call, _) = try await queuedCall(test)
            let token = try #require(test.callerToken(call))
            let alice = try await test.agent("Alice")
            _ = try await alice.nextOffer()
            _ = try await alice.nextState()
            _ = try await alice.request(.accept(rtcId: call), id: "a")
            let callerSide = try #require(try await test.join(call, credential: token).params)
            for credential in [nil, alice.token, "guess"] as [String?] {
                let socket = try await test.collider(credential: credential)
                try socket.send(ColliderCommand.register(roomId: call, clientId: callerSide.clientId))
                guard case .failure = try await socket.next(ColliderDelivery.self) else {
                    Issue.record("registration with \(credential ?? "no credential") was not refused")
                    continue
                }
                #expect(try await socket.nextClose().code == ECVCloseCode.unauthorized)
            }
            // The query parameter carries the credential for browsers.
            let byQuery = try await SocketProbe.connect(test.ws + ECVAPI.signalingSocket + "?token=" + token)
            let log = test.service.log.subscribe()
            try byQuery.send(ColliderCommand.register(roomId: call, clientId: callerSide.clientId))
            try await waitFor(log, "the caller's registration") { $0.hasPrefix("\(callerSide.clientId) registered") }
            await test.stop()
        }

        /// The new leg of a transfer keeps the caller's token: the caller follows it, nobody else can.
        @Test func aTransferredLegKeepsTheCallersToken() async throws {
            let test = try await TestService.start { $0.queues = ["default", "Billing"] }
            let (call, caller) = try await queuedCall(test)
            let alice = try await test.agent("Alice")
            _ = try await alice.nextOffer()
            _ = try await alice.nextState()
            _ = try await alice.request(.accept(rtcId: call), id: "a")
            _ = try await caller.next(QueueSocketMessage.self)
            _ = try await alice.request(.transfer(rtcId: call, target: .queue("Billing")), id: "t")
            #expect(try await caller.next(QueueSocketMessage.self) == .transferPending(rtcId: call, target: .queue("Billing")))
            guard case .transferCompleted(_, let newRtcId) = try await caller.next(QueueSocketMessage.self) else {
                Issue.record("expected transfer_completed")
                return
            }
            let outsider = try await SocketProbe.connect(test.ws + ECVAPI.queueSocket + "?rtcId=" + newRtcId)
            #expect(try await outsider.next(QueueSocketMessage.self).kind == .error)
            test.inherit(newRtcId, from: call)
            let newLeg = try await test.queueSocket(newRtcId)
            #expect(try await newLeg.next(QueueSocketMessage.self) == .waiting(rtcId: newRtcId, queue: "Billing"))
            await test.stop()
        }
    }
}
