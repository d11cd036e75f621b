import ECVProtocol
import ECVService
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
            #expect([1009, 1006].contains(try await Self.end(of: queue)))
            let agent = try await test.agent("Alice", ready: nil)
            try agent.socket.connection.send(text: String(repeating: "a", count: 2048))
            #expect([1009, 1006].contains(try await Self.end(of: agent.socket)))
            // The agent socket's loss logs the agent out; a collider frame of the same size is fine.
            let collider = try await test.collider()
            try collider.connection.send(text: String(repeating: "c", count: 2048))
            guard case .failure = try await collider.next(ColliderDelivery.self) else {
                Issue.record("the collider answers a 2 KiB frame")
                return
            }
            await test.stop()
        }

        /// The close code of a socket the service dropped (libsoup closes with 1009, the peer may see
        /// the reset first: 1006).
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
