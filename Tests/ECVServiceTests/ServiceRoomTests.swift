import ECVProtocol
import ECVService
import Foundation
import Soup
import Testing

extension ServiceTests {
    @Suite("Room server and collider") struct RoomTests {
        static let offer = SignalingMessage.offer(sdp: "v=0\r\no=- 1 2 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\n")
        static let answer = SignalingMessage.answer(sdp: "v=0\r\no=- 3 4 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\n")
        static func candidate(_ index: Int) -> SignalingMessage {
            .candidate(ICECandidate(sdpMLineIndex: index % 2, sdpMid: index % 2 == 0 ? "video0" : "audio1",
                                    candidate: "candidate:\(index) 1 UDP 2015363327 127.0.0.1 \(40000 + index) typ host"))
        }

        /// A client joined over HTTP with its collider socket registered.
        struct Peer {
            let params: JoinParameters
            let socket: SocketProbe
            var clientId: String { params.clientId }
        }

        private func joinAndRegister(_ test: TestService, room: String) async throws -> Peer {
            let joined = try await test.join(room)
            let params = try #require(joined.params)
            let socket = try await SocketProbe.connect(params.wssUrl)
            try socket.send(ColliderCommand.register(roomId: room, clientId: params.clientId))
            return Peer(params: params, socket: socket)
        }

        @Test func offerAnswerAndCandidatesRelayInOrderBetweenTwoClients() async throws {
            let test = try await TestService.start(callerTokens: false) { $0.iceServers = [ICEServer(urls: ["stun:stun.example.org:3478"])] }
            let room = "rtc-room-1"
            // The initiator posts its offer and first candidates over HTTP before anyone else is there.
            let first = try await test.join(room)
            let initiator = try #require(first.params)
            #expect(initiator.isInitiator && initiator.messages.isEmpty)
            #expect(initiator.wssUrl == test.ws + "/ws" && initiator.wssPostUrl == test.base)
            #expect(initiator.roomLink == test.base + "/r/" + room)
            #expect(initiator.pcConfig == PeerConnectionConfig(iceServers: [ICEServer(urls: ["stun:stun.example.org:3478"])],
                                                              bundlePolicy: "max-bundle", rtcpMuxPolicy: "require"))
            #expect(initiator.clientId.count == 8 && initiator.clientId.allSatisfy(\.isNumber))
            let early = [Self.offer, Self.candidate(0), Self.candidate(1)]
            for message in early {
                let posted = try await test.post(ECVAPI.messagePath(room: room, client: initiator.clientId), json: message)
                #expect(try test.decode(RoomResponse.self, posted) == RoomResponse(result: .success))
            }
            let initiatorSocket = try await SocketProbe.connect(initiator.wssUrl)
            try initiatorSocket.send(ColliderCommand.register(roomId: room, clientId: initiator.clientId))

            // The second joiner gets the stored messages in its join answer, in order.
            let answerer = try await joinAndRegister(test, room: room)
            #expect(!answerer.params.isInitiator)
            #expect(answerer.params.messages == early)
            #expect(answerer.clientId != initiator.clientId)

            // Live relay both ways, in order, never back to the sender.
            try answerer.socket.send(ColliderCommand.send(Self.answer))
            for index in 2..<12 { try answerer.socket.send(ColliderCommand.send(Self.candidate(index))) }
            var received: [SignalingMessage] = []
            for _ in 0..<11 {
                guard case .message(let message) = try await initiatorSocket.next(ColliderDelivery.self) else {
                    Issue.record("expected a payload")
                    return
                }
                received.append(message)
            }
            #expect(received == [Self.answer] + (2..<12).map(Self.candidate))
            for index in 12..<20 { try initiatorSocket.send(ColliderCommand.send(Self.candidate(index))) }
            var atAnswerer: [SignalingMessage] = []
            for _ in 0..<8 {
                guard case .message(let message) = try await answerer.socket.next(ColliderDelivery.self) else {
                    Issue.record("expected a payload")
                    return
                }
                atAnswerer.append(message)
            }
            #expect(atAnswerer == (12..<20).map(Self.candidate))
            // An HTTP post from a registered client is relayed live too.
            _ = try await test.post(ECVAPI.messagePath(room: room, client: initiator.clientId), json: SignalingMessage.bye)
            #expect(try await answerer.socket.next(ColliderDelivery.self) == .message(.bye))

            // A third client is refused.
            #expect(try await test.join(room) == JoinResponse(result: .full))
            await test.stop()
        }

        @Test func payloadsForAJoinedButUnregisteredClientWaitForItsSocket() async throws {
            let test = try await TestService.start(callerTokens: false)
            let room = "rtc-room-2"
            let initiator = try await joinAndRegister(test, room: room)
            let second = try #require(try await test.join(room).params)
            // Posted (and answered) before the second client registers: queued for it.
            for message in [Self.offer, Self.candidate(0), Self.candidate(1)] {
                _ = try await test.post(ECVAPI.messagePath(room: room, client: initiator.clientId), json: message)
            }
            let socket = try await SocketProbe.connect(second.wssUrl)
            try socket.send(ColliderCommand.register(roomId: room, clientId: second.clientId))
            try initiator.socket.send(ColliderCommand.send(Self.candidate(2)))
            var received: [ColliderDelivery] = []
            for _ in 0..<4 { received.append(try await socket.next(ColliderDelivery.self)) }
            #expect(received == [Self.offer, Self.candidate(0), Self.candidate(1), Self.candidate(2)].map(ColliderDelivery.message))
            await test.stop()
        }

        @Test func roomAnswersForBadRequests() async throws {
            let test = try await TestService.start(callerTokens: false)
            #expect(try await test.join("bad room!") == JoinResponse(result: .invalidRequest))
            let unknownRoom = try await test.post(ECVAPI.messagePath(room: "nowhere", client: "1"), json: Self.offer)
            #expect(try test.decode(RoomResponse.self, unknownRoom) == RoomResponse(result: .unknownRoom))
            let params = try #require(try await test.join("rtc-room-3").params)
            let unknownClient = try await test.post(ECVAPI.messagePath(room: "rtc-room-3", client: "12345678"), json: Self.offer)
            #expect(try test.decode(RoomResponse.self, unknownClient) == RoomResponse(result: .unknownClient))
            let invalid = try await test.post(ECVAPI.messagePath(room: "rtc-room-3", client: params.clientId),
                                              body: #"{"type":"remove-candidates"}"#)
            #expect(try test.decode(RoomResponse.self, invalid) == RoomResponse(result: .invalidRequest))
            #expect(unknownRoom.status == 200 && invalid.status == 200)
            let leave = try await test.post(ECVAPI.leavePath(room: "nowhere", client: "1"))
            #expect(try test.decode(RoomResponse.self, leave) == RoomResponse(result: .success))
            await test.stop()
        }

        @Test func leavingMakesTheOtherClientTheInitiatorAndDropsItsPayloads() async throws {
            let test = try await TestService.start(callerTokens: false)
            let room = "rtc-room-4"
            let first = try #require(try await test.join(room).params)
            let second = try #require(try await test.join(room).params)
            // Queued for the second client, which leaves before registering: dropped.
            _ = try await test.post(ECVAPI.messagePath(room: room, client: first.clientId), json: Self.offer)
            _ = try await test.post(ECVAPI.leavePath(room: room, client: second.clientId))
            _ = try await test.post(ECVAPI.leavePath(room: room, client: second.clientId)) // idempotent
            let third = try #require(try await test.join(room).params)
            #expect(!third.isInitiator && third.messages.isEmpty)
            // The initiator leaves: the remaining client becomes the initiator, so a newcomer answers.
            _ = try await test.post(ECVAPI.leavePath(room: room, client: first.clientId))
            let fourth = try #require(try await test.join(room).params)
            #expect(!fourth.isInitiator)
            #expect(try await test.join(room) == JoinResponse(result: .full))
            _ = try await test.post(ECVAPI.leavePath(room: room, client: third.clientId))
            _ = try await test.post(ECVAPI.leavePath(room: room, client: fourth.clientId))
            #expect(test.service.roomCount == 0, "the last client leaving forgets the room")
            let fresh = try #require(try await test.join(room).params)
            #expect(fresh.isInitiator && fresh.messages.isEmpty)
            await test.stop()
        }

        @Test func colliderRefusesBadRegistrationsAndReplacesOlderSockets() async throws {
            let test = try await TestService.start(callerTokens: false)
            let room = "rtc-room-5"
            let notJoined = try await test.collider()
            try notJoined.send(ColliderCommand.register(roomId: room, clientId: "11112222"))
            #expect(try await notJoined.next(ColliderDelivery.self) == .failure("client 11112222 has not joined room \(room)"))
            #expect(try await notJoined.nextClose().code == ECVCloseCode.notFound)

            let early = try await test.collider()
            try early.send(ColliderCommand.send(Self.offer))
            #expect(try await early.next(ColliderDelivery.self) == .failure("send before register"))
            try early.connection.send(text: #"{"cmd":"send","msg":"{\"type\":\"offer\"}"}"#)
            guard case .failure(let message) = try await early.next(ColliderDelivery.self) else {
                Issue.record("an invalid payload must get an error delivery")
                return
            }
            #expect(message.contains("msg.sdp"))
            try early.connection.send(text: "garbage")
            guard case .failure = try await early.next(ColliderDelivery.self) else {
                Issue.record("garbage must get an error delivery")
                return
            }

            let peer = try await joinAndRegister(test, room: room)
            try peer.socket.send(ColliderCommand.register(roomId: room, clientId: peer.clientId))
            #expect(try await peer.socket.next(ColliderDelivery.self) == .failure("this socket is already registered"))
            let other = try #require(try await test.join(room).params)
            let replacement = try await SocketProbe.connect(peer.params.wssUrl)
            try replacement.send(ColliderCommand.register(roomId: room, clientId: peer.clientId))
            #expect(try await peer.socket.nextClose().code == ECVCloseCode.replaced)
            _ = try await test.post(ECVAPI.messagePath(room: room, client: other.clientId), json: Self.answer)
            #expect(try await replacement.next(ColliderDelivery.self) == .message(Self.answer))
            await test.stop()
        }

        @Test func colliderHTTPSideRelaysAndUnregisters() async throws {
            let test = try await TestService.start(callerTokens: false)
            let room = "rtc-room-6"
            let first = try await joinAndRegister(test, room: room)
            let second = try await joinAndRegister(test, room: room)
            let posted = try await test.post(ECVAPI.colliderPostPath(room: room, client: second.clientId), json: Self.answer)
            #expect(posted.status == 200 && posted.body.isEmpty)
            #expect(try await first.socket.next(ColliderDelivery.self) == .message(Self.answer))
            let unknown = try await test.post(ECVAPI.colliderPostPath(room: room, client: "99999999"), json: Self.answer)
            #expect(unknown.status == 404)
            let deleted = try await test.client.send(HTTPRequest(method: "DELETE",
                                                                 url: test.base + ECVAPI.colliderPostPath(room: room, client: first.clientId)))
            #expect(deleted.status == 200)
            #expect(try await first.socket.nextClose().code == ECVCloseCode.normal)
            await test.stop()
        }

        @Test func theEndOfACallClosesItsRoom() async throws {
            let test = try await TestService.start(callerTokens: false)
            let agent = try await test.agent("Alice")
            let call = try await test.dial()
            _ = try await agent.nextOffer()
            _ = try await agent.nextState()
            #expect(try await agent.request(.accept(rtcId: call), id: "a") == .ack(requestId: "a"))
            let agentPeer = try await joinAndRegister(test, room: call)
            let callerPeer = try await joinAndRegister(test, room: call)
            try callerPeer.socket.send(ColliderCommand.send(Self.answer))
            #expect(try await agentPeer.socket.next(ColliderDelivery.self) == .message(Self.answer))
            #expect(try await test.hangup(call).status == 200)
            for peer in [agentPeer, callerPeer] {
                #expect(try await peer.socket.next(ColliderDelivery.self) == .message(.bye))
                #expect(try await peer.socket.nextClose().code == ECVCloseCode.normal)
            }
            #expect(test.service.roomCount == 0)
            await test.stop()
        }

        @Test func theBrowserPageJoinsTheRoomItNames() async throws {
            let test = try await TestService.start(callerTokens: false)
            let page = try await test.get("/r/rtc-2")
            #expect(page.status == 200)
            #expect(page.headers["Content-Type"] == "text/html; charset=utf-8")
            let html = try #require(page.text)
            let settingsStart = try #require(html.range(of: #"<script id="ecv-settings" type="application/json">"#))
            let settingsEnd = try #require(html.range(of: "</script>", range: settingsStart.upperBound..<html.endIndex))
            let json = String(html[settingsStart.upperBound..<settingsEnd.lowerBound])
            let settings = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: String])
            #expect(settings == [
                "roomId": "rtc-2",
                "joinUrl": test.base + "/join/rtc-2",
                "messageUrl": test.base + "/message/rtc-2/",
                "leaveUrl": test.base + "/leave/rtc-2/",
                "signalingUrl": test.ws + "/ws",
                "hangupUrl": test.base + "/api/Hangup",
                "dataChannelLabel": "textchannel",
            ])
            for needle in ["new RTCPeerConnection", "createDataChannel", "onicecandidate", "cmd: 'register'",
                           "<video id=\"remote\"", "<video id=\"local\"", "getUserMedia", "type: 'candidate'"] {
                #expect(html.contains(needle), "the page lacks \(needle)")
            }
            #expect(try await test.get("/r/bad%20room").status == 404)
            // The page's first request, as the browser makes it, works.
            #expect(try await test.join("rtc-2").result == .success)
            await test.stop()
        }

        @Test func joinAnswersCanBeScriptedToCarryNoICEServers() async throws {
            let test = try await TestService.start(callerTokens: false) { $0.iceServers = [ICEServer(urls: ["stun:127.0.0.1:3478"])] }
            #expect(try #require(try await test.join("rtc-a").params).pcConfig.iceServers.count == 1)
            test.service.script.omitICEServersInJoin()
            #expect(try #require(try await test.join("rtc-b").params).pcConfig.iceServers.isEmpty)
            test.service.script.omitICEServersInJoin(false)
            #expect(try #require(try await test.join("rtc-c").params).pcConfig.iceServers.count == 1)
            await test.stop()
        }
    }
}
