import ECVProtocol
import ECVService
import Foundation
import Soup
import Testing

/// Every server test runs one after another: they open real sockets, and the lifecycle test counts
/// this process's threads and file descriptors, which concurrent tests would disturb.
@Suite(.serialized, .timeLimit(.minutes(3))) struct ServiceTests {}

extension ServiceTests {
    @Suite("ECV REST endpoints") struct RESTTests {
        /// `GET /` answers a small page linking the queues and the peer page; other methods are 405,
        /// and what the page shows from the configuration is escaped.
        @Test func theIndexPageLinksTheQueuesAndThePeerPage() async throws {
            let test = try await TestService.start { configuration in
                configuration.queues = ["default", "<b>Billing</b>"]
                configuration.peerServer = PeerServerConfiguration(keys: [PeerAPIKey(key: "demo")])
            }
            let page = try await test.get("/")
            #expect(page.status == 200 && page.headers["Content-Type"] == "text/html; charset=utf-8")
            let html = page.text ?? ""
            #expect(html.contains(#"<a href="/api/Queues">"#) && html.contains(#"<a href="/peerjs/client">"#), "\(html)")
            #expect(html.contains("&lt;b&gt;Billing&lt;/b&gt;") && !html.contains("<b>Billing"), "\(html)")
            #expect(html.contains("/r/&lt;rtcId&gt;"))
            #expect(try await test.post("/").status == 405)
            await test.stop()
        }

        @Test func getRtcIdIssuesDistinctIdsThatDialOnce() async throws {
            let test = try await TestService.start()
            let first = try await test.rtcId()
            let second = try await test.rtcId()
            #expect(first == "rtc-1" && second == "rtc-2")

            let response = try await test.post(ECVAPI.dialEx, json: DialExRequest(
                rtcId: first, callerName: "Jane Doe", attributes: ["video_flow": "ETB"], queue: nil,
                acdAttributes: ["hearingImpaired": "TRUE"], customPayload: ["campaign": "spring"]))
            #expect(response.status == 200)
            #expect(try test.decode(DialExResponse.self, response)
                == DialExResponse(rtcId: first, interactionId: "ix-1", queue: "default", priority: 10, callerToken: "token-1"))
            let again = try await test.post(ECVAPI.dialEx, json: DialExRequest(rtcId: first, callerName: "Jane Doe"))
            #expect(try test.error(again, status: 409).code == .alreadyDialed)
            #expect(test.service.script.dialCount(rtcId: first) == 2)
            await test.stop()
        }

        @Test func dialExRefusesBadRequestsNamingTheField() async throws {
            let test = try await TestService.start { $0.queues = ["default", "Billing"] }
            let rtcId = try await test.rtcId()
            let cases: [(body: String, field: String?)] = [
                ("not json", nil),
                ("{}", "rtcId"),
                (#"{"rtcId":"\#(rtcId)"}"#, "callerName"),
                (#"{"rtcId":"\#(rtcId)","callerName":"J","attributes":{"priority":5}}"#, "attributes.priority"),
                (#"{"rtcId":"\#(rtcId)","callerName":"J","acdAttributes":{"priority":"high"}}"#, "acdAttributes.priority"),
                (#"{"rtcId":"\#(rtcId)","callerName":"J","acdAttributes":{"hearingImpaired":"yes"}}"#, "acdAttributes.hearingImpaired"),
                (#"{"rtcId":"\#(rtcId)","callerName":"  "}"#, "callerName"),
                (#"{"rtcId":"\#(rtcId)","callerName":"J","queue":""}"#, "queue"),
                (#"{"rtcId":"bad id/","callerName":"J"}"#, "rtcId"),
            ]
            for (body, field) in cases {
                let error = try test.error(try await test.post(ECVAPI.dialEx, body: body), status: 400)
                #expect(error.code == .badRequest, "\(body)")
                #expect(error.field == field, "\(body): \(error.message)")
            }
            // None of them dialed: the id is still dialable.
            let ok = try await test.post(ECVAPI.dialEx, json: DialExRequest(rtcId: rtcId, callerName: "J", queue: "Billing"))
            #expect(try test.decode(DialExResponse.self, ok).queue == "Billing")
            await test.stop()
        }

        @Test func dialExErrorsForUnknownIdsAndQueues() async throws {
            let test = try await TestService.start()
            let unknown = try test.error(try await test.post(ECVAPI.dialEx, json: DialExRequest(rtcId: "5d1c", callerName: "J")),
                                         status: 404)
            #expect(unknown.code == .unknownRtcId)
            let rtcId = try await test.rtcId()
            let noQueue = try test.error(try await test.post(ECVAPI.dialEx, json: DialExRequest(rtcId: rtcId, callerName: "J",
                                                                                                 queue: "Nowhere")),
                                         status: 404)
            #expect(noQueue.code == .unknownQueue)
            await test.stop()
        }

        @Test func unissuedRtcIdsDialWhenConfigured() async throws {
            let test = try await TestService.start { $0.acceptsUnissuedRtcIds = true }
            let response = try await test.post(ECVAPI.dialEx, json: DialExRequest(rtcId: "my-own.id~1", callerName: "J"))
            #expect(response.status == 200)
            #expect(try await test.poll("my-own.id~1").state == .wait)
            await test.stop()
        }

        @Test func scriptedDialFailuresComeInOrderThenDialsWork() async throws {
            let test = try await TestService.start()
            test.service.script.failNextDial(status: 500)
            test.service.script.failNextDial(status: 503, code: .serviceUnavailable, message: "overloaded")
            let rtcId = try await test.rtcId()
            let dial = DialExRequest(rtcId: rtcId, callerName: "J")
            #expect(try test.error(try await test.post(ECVAPI.dialEx, json: dial), status: 500).code == .serviceFailure)
            let second = try test.error(try await test.post(ECVAPI.dialEx, json: dial), status: 503)
            #expect(second == ServiceErrorResponse(code: .serviceUnavailable, message: "overloaded"))
            #expect(try await test.post(ECVAPI.dialEx, json: dial).status == 200)
            #expect(test.service.script.dialCount(rtcId: rtcId) == 3)
            await test.stop()
        }

        @Test func additionalHeadersReachTheAuthenticationHook() async throws {
            let test = try await TestService.start { configuration in
                configuration.dialAuthenticator = { request in
                    request.header("x-auth-token") == "user_session_token" ? nil : .unauthorized("no session for \(request.dial.callerName)")
                }
            }
            let rtcId = try await test.rtcId()
            let dial = DialExRequest(rtcId: rtcId, callerName: "Jane")
            let refused = try test.error(try await test.post(ECVAPI.dialEx, json: dial), status: 401)
            #expect(refused == ServiceErrorResponse(code: .unauthorized, message: "no session for Jane"))
            let accepted = try await test.post(ECVAPI.dialEx, json: dial, headers: ["X-Auth-Token": "user_session_token"])
            #expect(accepted.status == 200)
            #expect(test.service.script.dialHeaders(rtcId: rtcId)?.contains(RequestHeader(name: "X-Auth-Token",
                                                                                          value: "user_session_token")) == true)
            await test.stop()
        }

        @Test func hangupIsIdempotentAndDiscardsUndialedIds() async throws {
            let test = try await TestService.start()
            let call = try await test.dial()
            let first = try await test.hangup(call)
            #expect(try test.decode(HangupResponse.self, first) == HangupResponse(rtcId: call, state: .ended))
            #expect(try await test.hangup(call).status == 200)
            #expect(try await test.poll(call) == QueueInfoResponse(rtcId: call, state: .ended, position: -1, ewtSeconds: -1,
                                                                   reason: .callerHangup))

            // An rtcId issued but not dialed has no caller yet: nobody may discard it (it stays dialable).
            let undialed = try await test.rtcId()
            #expect(try test.error(try await test.hangup(undialed), status: 401).code == .unauthorized)
            let late = try await test.post(ECVAPI.dialEx, json: DialExRequest(rtcId: undialed, callerName: "J"))
            #expect(late.status == 200, "a refused hangup leaves the id dialable")

            #expect(try test.error(try await test.hangup("never-issued"), status: 404).code == .unknownRtcId)
            #expect(try test.error(try await test.post(ECVAPI.hangup, body: #"{"reason":"x"}"#), status: 400).field == "rtcId")
            await test.stop()
        }

        @Test func pollingAnswersStatesAndFigures() async throws {
            let test = try await TestService.start()
            let missing = try test.error(try await test.get(ECVAPI.waitForRoomInterval), status: 400)
            #expect(missing.field == "rtcId")
            #expect(try test.error(try await test.get(ECVAPI.waitForRoomQueueInterval + "?rtcId="), status: 400).field == "rtcId")
            #expect(try await test.poll("rtc-404") == QueueInfoResponse(rtcId: "rtc-404", state: .notFound, position: -1, ewtSeconds: -1))
            #expect(try await test.poll("rtc-404", queueInfo: false) == QueueInfoResponse(rtcId: "rtc-404", state: .notFound))

            let first = try await test.dial("A")
            let second = try await test.dial("B")
            // No agent works the queue: a position, no estimate.
            #expect(try await test.poll(second) == QueueInfoResponse(rtcId: second, state: .wait, position: 2, ewtSeconds: -1))
            #expect(try await test.poll(second, queueInfo: false) == QueueInfoResponse(rtcId: second, state: .wait))
            let agent = try await test.agent("Alice")
            let offer = try await agent.nextOffer()
            #expect(offer.rtcId == first)
            _ = try await agent.nextState() // ringing
            // The only agent is ringing for A, so B is first in line, served after one assumed handle time.
            #expect(try await test.poll(second) == QueueInfoResponse(rtcId: second, state: .wait, position: 1, ewtSeconds: 120))
            #expect(try await test.poll(first) == QueueInfoResponse(rtcId: first, state: .wait, position: -1, ewtSeconds: -1))
            #expect(try await agent.request(.accept(rtcId: first), id: "a") == .ack(requestId: "a"))
            #expect(try await test.poll(first).state == .agentConnected)
            #expect(try await test.poll(first, queueInfo: false) == QueueInfoResponse(rtcId: first, state: .agentConnected))
            await test.stop()
        }

        @Test func queueStatisticsOffDropsTheFigures() async throws {
            let test = try await TestService.start { $0.queueStatistics = false }
            let call = try await test.dial()
            #expect(try await test.poll(call) == QueueInfoResponse(rtcId: call, state: .wait))
            await test.stop()
        }

        @Test func queuesOverviewCountsCallsAndAgents() async throws {
            let test = try await TestService.start { $0.queues = ["default", "Billing"] }
            _ = try await test.dial("A")
            _ = try await test.dial("B")
            let billing = try await test.agent("Bob", ready: ["Billing"])
            _ = billing
            let overview = try test.decode(QueuesResponse.self, try await test.get(ECVAPI.queues))
            #expect(overview == QueuesResponse(defaultQueue: "default", queues: [
                QueueSummary(name: "default", waiting: 2, readyAgents: 0, staffedAgents: 0, averageHandleSeconds: nil),
                QueueSummary(name: "Billing", waiting: 0, readyAgents: 1, staffedAgents: 1, averageHandleSeconds: nil),
            ]))
            await test.stop()
        }

        @Test func unknownPathsAndWrongMethodsAnswerJSON() async throws {
            let test = try await TestService.start()
            let unknown = try test.error(try await test.get("/api/Nothing"), status: 404)
            #expect(unknown.code == "NOT_FOUND")
            // `GET /` is the index page (theIndexPageLinksTheQueuesAndThePeerPage); a path under nothing is not.
            #expect(try test.error(try await test.get("/nothing"), status: 404).code == "NOT_FOUND")
            #expect(try test.error(try await test.get("/a/b/c"), status: 404).code == "NOT_FOUND")
            let wrongMethod = try test.error(try await test.get(ECVAPI.getRtcId), status: 405)
            #expect(wrongMethod.code == "METHOD_NOT_ALLOWED")
            let getDial = try await test.client.send(HTTPRequest(method: "PUT", url: test.base + ECVAPI.dialEx))
            #expect(getDial.status == 405)
            // A binary body is malformed JSON, not a crash.
            let garbage = try await test.client.send(HTTPRequest(method: "POST", url: test.base + ECVAPI.dialEx,
                                                                 body: [0xff, 0xfe, 0x00, 0x7b]))
            #expect(try test.error(garbage, status: 400).code == .badRequest)
            await test.stop()
        }
    }
}
