import ECVProtocol
import ECVService
import Foundation
import MediaTestSupport
import Soup
import Testing

extension ServiceTests {
    /// docs/protocol.md §0.1: every input from unauthenticated clients is bounded, with a status.
    @Suite("Limits") struct LimitsTests {
        @Test func dialExFieldsAreBoundedSoNoOfferFrameCanBreakAnAgent() async throws {
            let test = try await TestService.start()
            let alice = try await test.agent("Alice")
            let limits = ServiceLimits()
            let many = Dictionary(uniqueKeysWithValues: (0...limits.maxAttributeEntries).map { ("k\($0)", "v") })
            let refused: [(DialExRequest, String)] = [
                (DialExRequest(rtcId: "x", callerName: String(repeating: "n", count: limits.maxNameBytes + 1)), "callerName"),
                (DialExRequest(rtcId: "x", callerName: "Jane\nDialEx rtc-9 → 200"), "callerName"),
                (DialExRequest(rtcId: "x", callerName: "J", attributes: many), "attributes"),
                (DialExRequest(rtcId: "x", callerName: "J", acdAttributes: ["a": String(repeating: "v", count: limits.maxAttributeValueBytes + 1)]),
                 "acdAttributes.a"),
                (DialExRequest(rtcId: "x", callerName: "J", customPayload: ["bad\u{7}key": "v"]), "customPayload"),
            ]
            for (dial, field) in refused {
                var request = dial
                request.rtcId = try await test.rtcId()
                let answer = try test.error(try await test.post(ECVAPI.dialEx, json: request), status: 400)
                #expect(answer.field == field, "\(answer)")
            }
            // 4.5 MiB of name is refused before it is even read.
            let huge = try await test.post(ECVAPI.dialEx, body: #"{"rtcId":"a","callerName":""# + String(repeating: "x", count: 9 << 19) + #""}"#)
            #expect(huge.status == 413)
            // The agent saw none of it and is still there: the next proper call rings at it.
            let call = try await test.dial()
            #expect(try await alice.nextOffer().rtcId == call)
            #expect(test.service.acd.snapshot().agents.map(\.agentId) == [alice.id])
            await test.stop()
        }

        @Test func fieldLimitsThatWouldOverflowAnAgentFrameAreAConfigurationError() throws {
            var configuration = ReferenceServiceConfiguration()
            configuration.limits.maxAttributeValueBytes = 1 << 20
            #expect(throws: ACDError.self) { try ReferenceService(configuration: configuration) }
        }

        @Test func agentLoginsAreBoundedInSizeAndNumber() async throws {
            let test = try await TestService.start { $0.limits.maxAgents = 2 }
            let long = try await test.post(ECVAPI.agentLogin, json: AgentLoginRequest(name: String(repeating: "a", count: 300)))
            #expect(try test.error(long, status: 400).field == "name")
            let huge = try await test.post(ECVAPI.agentLogin, body: #"{"name":""# + String(repeating: "a", count: 5 << 20) + #""}"#)
            #expect(huge.status == 413)
            _ = try await test.login("A")
            _ = try await test.login("B")
            let third = try await test.post(ECVAPI.agentLogin, json: AgentLoginRequest(name: "C"))
            #expect(try test.error(third, status: 503).code == .serviceUnavailable)
            #expect(test.service.acd.snapshot().agents.count == 2)
            await test.stop()
        }

        @Test func aRoomKeepsABoundedNumberOfPayloads() async throws {
            let test = try await TestService.start(callerTokens: false) { $0.limits.maxMessagesPerRoom = 5 }
            let first = try #require(try await test.join("r1").params)
            let candidate = SignalingMessage.candidate(ICECandidate(sdpMLineIndex: 0, sdpMid: "0", candidate: "candidate:1 1 udp 1 1.2.3.4 9 typ host"))
            for index in 0..<7 {
                let answer = try test.decode(RoomResponse.self, try await test.post(ECVAPI.messagePath(room: "r1", client: first.clientId),
                                                                                   json: candidate))
                #expect(answer.result == (index < 5 ? .success : .error), "payload \(index)")
            }
            let second = try #require(try await test.join("r1").params)
            #expect(second.messages.count == 5)
            await test.stop()
        }

        /// Issue #34: a caller waiting in the queue joined its call's room and sent payloads of up to
        /// 256 KiB for an agent who had not joined; the room kept 256 of them (~59 MiB a call). The
        /// room keeps 512 KiB now; the caller hears `failure` for the rest.
        @Test func aWaitingCallerCannotParkMemoryInItsRoom() async throws {
            let test = try await TestService.start()
            let before = residentMemoryBytes()
            let sdp = String(repeating: "a", count: 200_000) // two fit in 512 KiB, a third does not
            var calls: [String] = []
            for _ in 0..<3 {
                let call = try await test.dial()
                let token = test.callerToken(call)
                let caller = try #require(try await test.join(call, credential: token).params)
                let collider = try await test.collider(credential: token)
                try collider.send(ColliderCommand.register(roomId: call, clientId: caller.clientId))
                // Each refusal answered before the next payload: the caller paces itself by them.
                for index in 0..<100 {
                    try collider.send(ColliderCommand.send(.offer(sdp: sdp)))
                    guard index >= 2 else { continue }
                    guard case .failure = try await collider.next(ColliderDelivery.self) else {
                        Issue.record("payload \(index) of call \(call) was not refused")
                        return
                    }
                }
                calls.append(call)
            }
            let growth = residentMemoryBytes() - before
            #expect(growth < 32 << 20, "RSS grew by \(growth >> 20) MiB")
            // The agent who answers finds the two payloads that were kept.
            let agent = try await test.agent("Alice")
            let offer = try await agent.nextOffer()
            #expect(try await agent.nextState().state == .ringing)
            #expect(try await agent.request(.accept(rtcId: offer.rtcId), id: "a") == .ack(requestId: "a"))
            let joined = try #require(try await test.join(offer.rtcId, credential: agent.token).params)
            #expect(joined.messages.count == 2)
            await test.stop()
        }

        /// Issue #34: a collider socket that never read grew the service by 132 MiB. Its outgoing
        /// queue is bounded: past it, the socket is closed (1008) and the close logged; what the
        /// room then queues for the client is bounded by the room's bytes.
        @Test func aColliderSocketThatNeverReadsIsClosedAndLogged() async throws {
            let test = try await TestService.start {
                $0.limits.maxOutgoingWebSocketBytes = 2 << 20
                $0.limits.maxUnreadIncomingWebSocketBytes = 16 << 20 // the talker is paced, and not what is measured here
            }
            let call = try await test.dial()
            let token = try #require(test.callerToken(call))
            let agent = try await test.agent("Alice")
            let offer = try await agent.nextOffer()
            _ = try await agent.nextState()
            _ = try await agent.request(.accept(rtcId: offer.rtcId), id: "a")
            let caller = try #require(try await test.join(call, credential: token).params)
            let agentSide = try #require(try await test.join(call, credential: agent.token).params)
            // The caller's socket registers, then reads nothing more.
            let deaf = try HostileClient(port: UInt16(try #require(URL(string: test.base)?.port)))
            deaf.upgrade(path: ECVAPI.signalingSocket, headers: [ECVAPI.callTokenHeader: token])
            deaf.sendFrame(try ECVJSON.encodeString(ColliderCommand.register(roomId: call, clientId: caller.clientId)))
            let talker = try await test.collider(credential: agent.token)
            try talker.send(ColliderCommand.register(roomId: call, clientId: agentSide.clientId))
            try await eventually(.seconds(5), "both registered") {
                test.service.log.entries.filter { $0.message.contains("registered") }.count >= 2
            }
            let before = residentMemoryBytes()
            let sdp = String(repeating: "s", count: 200_000)
            for index in 0..<150 { // 30 MB for the deaf socket
                try talker.send(ColliderCommand.send(.offer(sdp: sdp)))
                if index % 4 == 3 { try await Task.sleep(for: .milliseconds(10)) }
            }
            try await eventually(.seconds(10), "the deaf socket closed for its backlog") {
                test.service.log.entries.contains { $0.category == .collider && $0.message.contains("outgoing backlog") }
            }
            // What the kernel's buffers took went out; of the rest, the room queued 512 KiB and refused the others.
            var refused = 0
            while refused < 60, case .failure = try await talker.next(ColliderDelivery.self) { refused += 1 }
            let growth = residentMemoryBytes() - before
            #expect(refused == 60)
            #expect(growth < 32 << 20, "RSS grew by \(growth >> 20) MiB")
            await test.stop()
        }

        @Test func callRequestsPerAddressAreRateLimited() async throws {
            let test = try await TestService.start { $0.limits.maxCallRequestsPerAddressPerMinute = 3 }
            for _ in 0..<3 { _ = try await test.rtcId() }
            let refused = try await test.post(ECVAPI.getRtcId)
            #expect(refused.status == 429 && refused.headers["Retry-After"] == "60")
            await test.stop()
        }

        @Test func eachSocketKindHasItsOwnFrameLimit() async throws {
            let test = try await TestService.start { $0.limits.agentSocketFrameBytes = 1024 }
            let call = try await test.dial()
            let queue = try await test.queueSocket(call)
            _ = try await queue.next(QueueSocketMessage.self)
            try queue.connection.send(text: String(repeating: "q", count: ServiceLimits().queueSocketFrameBytes + 1))
            #expect(try await Self.end(of: queue) == 1009)
            let agent = try await test.agent("Alice", ready: nil)
            try agent.socket.connection.send(text: String(repeating: "a", count: 2048))
            #expect(try await Self.end(of: agent.socket) == 1009)
            // The agent socket's loss logs the agent out; a collider frame of the same size is fine.
            let collider = try await test.collider()
            try collider.connection.send(text: String(repeating: "c", count: 2048))
            guard case .failure = try await collider.next(ColliderDelivery.self) else {
                Issue.record("the collider answers a 2 KiB frame")
                return
            }
            await test.stop()
        }

        /// The close code of a socket the service dropped (1009 for a frame past its limit: the
        /// service writes the close frame itself and drains the rest, as libsoup would send none).
        static func end(of socket: SocketProbe) async throws -> UInt16 {
            while true {
                switch try await socket.next() {
                case .closed(let code, _): return code
                case .error: continue
                case let other: throw UnexpectedFrame(description: "expected the socket to end, got \(other)")
                }
            }
        }

        /// Names, reasons and attributes cannot forge a log line nor make a huge one.
        @Test func logLinesCannotBeForgedOrBlownUp() async throws {
            let test = try await TestService.start()
            let call = try await test.dial()
            let forged = "x\n#99 [rest] Hangup rtc-7 (LOCAL_HANGUP) → ended\u{202E}"
            let long = String(repeating: "r", count: 60_000)
            for reason in [forged, long] {
                _ = try await test.post(ECVAPI.hangup, json: HangupRequest(rtcId: call, reason: reason), headers: test.callerHeaders(call))
            }
            _ = try await test.post(ECVAPI.agentLogin, json: AgentLoginRequest(name: "Eve\n#100 [agent] agent-1 logged in"))
            let entries = test.service.log.entries
            #expect(entries.allSatisfy { !$0.message.contains("\n") && !$0.message.contains("\u{202E}") })
            #expect(entries.allSatisfy { $0.message.utf8.count <= LogText.defaultLimit + 40 })
            #expect(entries.contains { $0.message.contains(#"x\n#99 [rest]"#) }, "the forged reason is there, escaped")
            #expect(entries.contains { $0.message.contains("more bytes)") }, "the long reason is cut")
            await test.stop()
        }

        @Test func recordedDialsAreBounded() async throws {
            let test = try await TestService.start { $0.acceptsUnissuedRtcIds = true; $0.limits.maxCallRequestsPerAddressPerMinute = 10_000 }
            let headers: HTTPHeaders = ["X-Pad": String(repeating: "p", count: 8000)]
            for index in 0..<1100 {
                _ = try await test.post(ECVAPI.dialEx, json: DialExRequest(rtcId: "d\(index)", callerName: ""), headers: headers)
            }
            #expect(test.service.script.dialHeaders(rtcId: "d0") == nil, "the oldest refused dials are forgotten")
            #expect(test.service.script.dialCount(rtcId: "d1099") == 1)
            await test.stop()
        }
    }
}
