import ECVProtocol
import ECVService
import Foundation
import Soup
import Testing

extension ServiceTests {
    @Suite("Robustness") struct RobustnessTests {
        /// Bodies that are not what any endpoint expects.
        static let garbage: [[UInt8]] = [
            [], Array("null".utf8), Array("[]".utf8), Array("\"text\"".utf8), Array("{".utf8), [0xff, 0x00, 0xfe],
            Array(#"{"rtcId":123,"callerName":["x"]}"#.utf8), Array(#"{"type":"offer","sdp":""}"#.utf8),
            Array(String(repeating: "[", count: 5000).utf8), Array(#"{"rtcId":"\u0000","name":"\ud800"}"#.utf8),
        ]

        @Test func garbageOnEveryEndpointGetsAnAnswerAndNoCrash() async throws {
            let test = try await TestService.start()
            let paths = [ECVAPI.getRtcId, ECVAPI.dialEx, ECVAPI.hangup, ECVAPI.agentLogin, ECVAPI.agentLogout,
                         "/join/rtc-x", "/message/rtc-x/1", "/leave/rtc-x/1", "/rtc-x/1", "/api/QueueSocket", "/ws"]
            for path in paths {
                for body in Self.garbage {
                    let response = try await test.client.send(HTTPRequest(method: "POST", url: test.base + path, body: body))
                    #expect((200..<600).contains(response.status), "\(path)")
                    if path == ECVAPI.dialEx || path == ECVAPI.agentLogin {
                        #expect(response.status == 400, "\(path) with \(String(decoding: body, as: UTF8.self).prefix(40))")
                    } else if path == ECVAPI.hangup {
                        // A well-formed body naming an rtcId that was never issued is 404, the rest 400.
                        #expect(response.status == 400 || response.status == 404)
                    }
                }
            }
            for query in ["?rtcId=%00", "?rtcId=%FF%FE", "?rtcId=" + String(repeating: "a", count: 4000), "?rtcId"] {
                let response = try await test.get(ECVAPI.waitForRoomQueueInterval + query)
                #expect(response.status == 200 || response.status == 400, "\(query.prefix(20)): \(response.status)")
            }

            // Every socket gets garbage frames and answers with errors or ignores them.
            let agent = try await test.agent("Alice")
            let collider = try await test.collider()
            let call = try await test.dial()
            let queue = try await test.queueSocket(call)
            _ = try await queue.next(QueueSocketMessage.self)
            _ = try await agent.nextOffer()
            _ = try await agent.nextState()
            for body in Self.garbage {
                let text = String(decoding: body, as: UTF8.self)
                try agent.socket.connection.send(text: text)
                try collider.connection.send(text: text)
                // Larger frames close a queue socket by design (its client sends nothing: LimitsTests).
                if body.count <= ServiceLimits().queueSocketFrameBytes { try queue.connection.send(text: text) }
                try agent.socket.connection.send(data: body)
            }
            for _ in 0..<(2 * Self.garbage.count) {
                guard case .error(_, .badRequest, _) = try await agent.next() else {
                    Issue.record("every garbage frame gets a BAD_REQUEST error")
                    return
                }
            }
            for _ in Self.garbage {
                guard case .failure = try await collider.next(ColliderDelivery.self) else {
                    Issue.record("every garbage frame gets an error delivery")
                    return
                }
            }
            // Still serving, state intact.
            #expect(try await agent.request(.accept(rtcId: call), id: "a") == .ack(requestId: "a"))
            #expect(try await queue.next(QueueSocketMessage.self).kind == .agentConnected)
            #expect(try await test.get(ECVAPI.queues).status == 200)
            await test.stop()
        }

        @Test func aVanishedColliderPeerGetsItsPayloadsOnItsNextSocket() async throws {
            let test = try await TestService.start(callerTokens: false)
            let room = "rtc-vanish"
            let first = try #require(try await test.join(room).params)
            let second = try #require(try await test.join(room).params)
            let vanishing = try await test.collider()
            try vanishing.send(ColliderCommand.register(roomId: room, clientId: second.clientId))
            _ = try await test.post(ECVAPI.messagePath(room: room, client: first.clientId), json: SignalingMessage.bye)
            #expect(try await vanishing.next(ColliderDelivery.self) == .message(.bye))
            let log = test.service.log.subscribe()
            vanishing.close()
            _ = try await vanishing.nextClose()
            try await waitFor(log, "the service noticing the close") { $0.hasPrefix("socket of \(second.clientId)") }
            let offer = SignalingMessage.offer(sdp: "v=0\r\n")
            _ = try await test.post(ECVAPI.messagePath(room: room, client: first.clientId), json: offer)
            let again = try await test.collider()
            try again.send(ColliderCommand.register(roomId: room, clientId: second.clientId))
            #expect(try await again.next(ColliderDelivery.self) == .message(offer))
            await test.stop()
        }

        /// A client that closes its collider socket while payloads stream to it, and registers a
        /// new one at once (a reconnecting SDK), gets each payload once, in order: what the old
        /// socket wrote before the close, then on the new socket what the old one accepted but
        /// could no longer write (its peer was closing) and what was queued since. Repeated, so
        /// that the close meets the stream at many points.
        @Test func aClientClosingMidStreamGetsEachPayloadOnceInOrderOnItsNextSocket() async throws {
            let test = try await TestService.start(callerTokens: false)
            let count = 150
            for round in 0..<20 {
                let room = "rtc-midstream-\(round)"
                let first = try #require(try await test.join(room).params)
                let second = try #require(try await test.join(room).params)
                let log = test.service.log.subscribe()
                let sender = try await test.collider()
                try sender.send(ColliderCommand.register(roomId: room, clientId: first.clientId))
                try await waitFor(log, "the sender registered") { $0 == "\(first.clientId) registered in room \(room)" }
                let old = try await test.collider()
                try old.send(ColliderCommand.register(roomId: room, clientId: second.clientId))
                try await waitFor(log, "the receiver registered") { $0 == "\(second.clientId) registered in room \(room)" }

                let sending = Task { for n in 1...count { try sender.send(ColliderCommand.send(Self.candidate(n))) } }
                var received: [Int] = []
                let closeAt = Int.random(in: 1...40)
                while received.count < closeAt { received.append(Self.number(try await old.next(ColliderDelivery.self))) }
                old.close()
                // What the old socket wrote before the close arrives ahead of it.
                while case .text(let text) = try await old.next() {
                    received.append(Self.number(try ECVJSON.decode(ColliderDelivery.self, from: text)))
                }
                let again = try await test.collider()
                try again.send(ColliderCommand.register(roomId: room, clientId: second.clientId))
                try await sending.value
                do {
                    while received.count < count { received.append(Self.number(try await again.next(ColliderDelivery.self))) }
                } catch {
                    Issue.record("round \(round), the close after \(closeAt): received \(received)")
                    throw error
                }
                #expect(received == Array(1...count), "round \(round): the close after \(closeAt)")
                sender.close()
                again.close()
            }
            await test.stop()
        }

        private static func candidate(_ n: Int) -> SignalingMessage {
            .candidate(ICECandidate(sdpMLineIndex: 0, sdpMid: "0", candidate: "candidate:\(n) 1 udp 1 127.0.0.1 \(9000 + n) typ host"))
        }

        /// The number of a candidate from `candidate(_:)`; -1 for any other delivery.
        private static func number(_ delivery: ColliderDelivery) -> Int {
            guard case .message(.candidate(let candidate)) = delivery else { return -1 }
            return Int(candidate.candidate.dropFirst("candidate:".count).prefix { $0 != " " }) ?? -1
        }

        @Test func closeRoomHookSaysByeAndForgetsTheRoom() async throws {
            let test = try await TestService.start(callerTokens: false)
            let room = "rtc-closing"
            let params = try #require(try await test.join(room).params)
            let socket = try await test.collider()
            let log = test.service.log.subscribe()
            try socket.send(ColliderCommand.register(roomId: room, clientId: params.clientId))
            try await waitFor(log, "the registration") { $0 == "\(params.clientId) registered in room \(room)" }
            #expect(test.service.script.closeRoom(rtcId: room))
            #expect(try await socket.next(ColliderDelivery.self) == .message(.bye))
            #expect(try await socket.nextClose().code == ECVCloseCode.normal)
            #expect(!test.service.script.closeRoom(rtcId: room))
            #expect(try #require(try await test.join(room).params).isInitiator, "a fresh room")
            await test.stop()
        }
    }
}
