import ECVProtocol
import ECVService
import Foundation
import Soup
import Testing

/// The identity-verification back office (docs/protocol.md §7) against hostile and careless
/// clients: keys and tokens checked, sessions kept to their token, every body bounded and
/// validated with the field named, the verdict only from the agent connected to the call.
@Suite(.serialized) struct ServiceVerificationTests {
    private func start(keys: [String] = ["k1"]) async throws -> TestService {
        try await TestService.start { $0.verification = VerificationBackOfficeConfiguration(apiKeys: keys) }
    }

    private func token(_ service: TestService, key: String = "k1") async throws -> String {
        let response = try await service.post(VerificationAPI.tokenCreate, body: "{}", headers: [VerificationAPI.apiKeyHeader: key])
        #expect(response.status == 200, "\(response.text ?? "")")
        return try service.decode(TokenCreateResponse.self, response).token
    }

    private func bearer(_ token: String) -> HTTPHeaders { ["Authorization": "Bearer \(token)"] }

    private let session = SessionModelVideoCall(callType: "NewCustomer", userName: "Enqura", identityNo: "12345678901", reference: "REF-1")

    @Test func tokensNeedAnAcceptedKeyAndAClosedBackOfficeIssuesNone() async throws {
        let service = try await start()
        _ = try service.error(try await service.post(VerificationAPI.tokenCreate), status: 401)
        _ = try service.error(try await service.post(VerificationAPI.tokenCreate, headers: [VerificationAPI.apiKeyHeader: "k2"]), status: 403)
        _ = try await token(service)
        // A token is no API key, and vice versa.
        _ = try service.error(try await service.post(VerificationAPI.sessionAdd, json: session, headers: bearer("k1")), status: 401)
        await service.stop()

        let closed = try await start(keys: [])
        _ = try closed.error(try await closed.post(VerificationAPI.tokenCreate, headers: [VerificationAPI.apiKeyHeader: ""]), status: 401)
        _ = try closed.error(try await closed.post(VerificationAPI.tokenCreate, headers: [VerificationAPI.apiKeyHeader: "k1"]), status: 403)
        await closed.stop()
    }

    @Test func sessionBodiesAreBoundedAndValidatedNamingTheField() async throws {
        let service = try await start()
        let headers = bearer(try await token(service))
        #expect(try service.error(try await service.post(VerificationAPI.sessionAdd, body: "{\"callType\":", headers: headers), status: 400).code == .badRequest)
        #expect(try service.error(try await service.post(VerificationAPI.sessionAdd, body: "{\"callType\":\"X\"}", headers: headers),
                                  status: 400).field == "reference")
        var long = session
        long.userName = String(repeating: "a", count: 300)
        #expect(try service.error(try await service.post(VerificationAPI.sessionAdd, json: long, headers: headers), status: 400).field == "userName")
        var control = session
        control.surname = "Doe\u{1B}[2J"
        #expect(try service.error(try await service.post(VerificationAPI.sessionAdd, json: control, headers: headers), status: 400).field == "surname")
        // Issue #34: the callerName rules, bytes counted: bidi overrides and isolates, line
        // separators, and one "character" of 40 kB (a letter and its combining marks).
        #expect(("e" + String(repeating: "\u{301}", count: 20_000)).count == 1)
        for (field, text) in [("userName", "Ali\u{202E}gnp.exe"), ("surname", "Doe\u{2066}x\u{2069}"), ("email", "a@b.c\u{2028}#2 x"),
                              ("reference", "e" + String(repeating: "\u{301}", count: 20_000))] {
            var model = session
            switch field {
            case "userName": model.userName = text
            case "surname": model.surname = text
            case "email": model.email = text
            default: model.reference = text
            }
            #expect(try service.error(try await service.post(VerificationAPI.sessionAdd, json: model, headers: headers), status: 400).field == field)
        }
        var accented = session
        accented.userName = "Çağrı Öztürk" // letters beyond ASCII are fine
        #expect(try await service.post(VerificationAPI.sessionAdd, json: accented, headers: headers).status == 200)
        let badName = SigningSetRequest(sessionId: "kyc-x", documentName: "consent\u{202E}fdp.exe", document: "I agree")
        #expect(try service.error(try await service.post(VerificationAPI.signingSet, json: badName, headers: headers), status: 400).field == "documentName")
        var identity = session
        identity.identityNo = "1' OR '1'='1"
        #expect(try service.error(try await service.post(VerificationAPI.sessionAdd, json: identity, headers: headers), status: 400).field == "identityNo")
        let huge = "{\"callType\":\"" + String(repeating: "x", count: 70_000) + "\"}"
        #expect(try await service.post(VerificationAPI.sessionAdd, body: huge, headers: headers).status == 413)
        let document = SigningSetRequest(sessionId: "kyc-x", documentName: "d", document: String(repeating: "y", count: VerificationAPI.maxDocumentBytes + 1))
        #expect(try service.error(try await service.post(VerificationAPI.signingSet, json: document, headers: headers), status: 400).field == "document")
        _ = try service.error(try await service.get(VerificationAPI.settingsGet, headers: headers), status: 400)
        _ = try service.error(try await service.get(VerificationAPI.sessionAdd, headers: headers), status: 405)
        _ = try service.error(try await service.get("/kyc/api/Nothing/Here", headers: headers), status: 404)
        await service.stop()
    }

    @Test func oneTokenCannotFillTheSessionTable() async throws {
        let service = try await TestService.start {
            $0.verification = VerificationBackOfficeConfiguration(apiKeys: ["k1"], maxSessionsPerToken: 2)
        }
        let headers = bearer(try await token(service))
        for _ in 0..<2 { #expect(try await service.post(VerificationAPI.sessionAdd, json: session, headers: headers).status == 200) }
        #expect(try service.error(try await service.post(VerificationAPI.sessionAdd, json: session, headers: headers), status: 429).code == "TOO_MANY_SESSIONS")
        // Another customer's token is not held back by it.
        #expect(try await service.post(VerificationAPI.sessionAdd, json: session, headers: bearer(try await token(service))).status == 200)
        await service.stop()
    }

    @Test func aSessionBelongsToTheTokenThatAddedIt() async throws {
        let service = try await start()
        let mine = bearer(try await token(service)), theirs = bearer(try await token(service))
        let id = try service.decode(SessionAddResponse.self, try await service.post(VerificationAPI.sessionAdd, json: session, headers: mine)).sessionId
        let query = "?\(VerificationAPI.sessionIdQueryName)=\(id)"
        #expect(try await service.get(VerificationAPI.settingsGet + query, headers: mine).status == 200)
        #expect(try service.error(try await service.get(VerificationAPI.settingsGet + query, headers: theirs), status: 404).code == "UNKNOWN_SESSION")
        let update = SessionUpdateRequest(sessionId: id, hearingImpaired: true, visuallyImpaired: false)
        _ = try service.error(try await service.post(VerificationAPI.sessionUpdate, json: update, headers: theirs), status: 404)
        #expect(try await service.post(VerificationAPI.sessionClose, json: SessionReference(sessionId: id), headers: mine).status == 200)
        _ = try service.error(try await service.post(VerificationAPI.sessionUpdate, json: update, headers: mine), status: 409)
        await service.stop()
    }

    @Test func onlyTheConnectedAgentPostsTheVerdict() async throws {
        let service = try await start()
        let headers = bearer(try await token(service))
        let id = try service.decode(SessionAddResponse.self, try await service.post(VerificationAPI.sessionAdd, json: session, headers: headers)).sessionId
        let rtcId = try await service.dial(acd: [VerificationAPI.sessionAttribute: id])
        #expect(try await service.post(VerificationAPI.integrationAdd, json: IntegrationAddRequest(sessionId: id, rtcId: rtcId),
                                       headers: headers.merging(service.callerHeaders(rtcId))).status == 200)
        let verdict = CallResultPost(rtcId: rtcId, result: "APPROVED", description: "ok")
        _ = try service.error(try await service.post(VerificationAPI.callResult, json: verdict), status: 401)
        _ = try service.error(try await service.post(VerificationAPI.callResult, json: verdict, headers: headers), status: 401)
        let bystander = try await service.agent("Bystander", ready: nil)
        _ = try service.error(try await service.post(VerificationAPI.callResult, json: verdict, headers: bearer(bystander.token)), status: 403)
        let agent = try await service.agent("Verifier")
        let offer = try await agent.nextOffer()
        #expect(offer.rtcId == rtcId)
        #expect(try await agent.nextState().state == .ringing)
        #expect(try await agent.request(.accept(rtcId: rtcId), id: "a") == .ack(requestId: "a"))
        let bad = CallResultPost(rtcId: rtcId, result: "approved; DROP", description: "ok")
        #expect(try service.error(try await service.post(VerificationAPI.callResult, json: bad, headers: bearer(agent.token)), status: 400).field == "result")
        let query = "?\(VerificationAPI.sessionIdQueryName)=\(id)"
        #expect(try service.error(try await service.get(VerificationAPI.callResult + query, headers: headers), status: 404).code == "NO_RESULT")
        #expect(try await service.post(VerificationAPI.callResult, json: verdict, headers: bearer(agent.token)).status == 200)
        let result = try service.decode(CallResultResponse.self, try await service.get(VerificationAPI.callResult + query, headers: headers))
        #expect(result == CallResultResponse(result: "APPROVED", description: "ok", reference: "REF-1"))
        bystander.socket.close()
        agent.socket.close()
        await service.stop()
    }

    /// The theft of issue #34: anyone with the app's API key made a session and linked another
    /// customer's rtcId to it (the last link won), then read that customer's verdict and moved its
    /// call in the queue. A link now needs the call's caller token, and a linked call stays linked.
    @Test func onlyTheCallerLinksItsCallAndALinkedCallStaysItsSessions() async throws {
        let service = try await start()
        let victim = bearer(try await token(service)), thief = bearer(try await token(service))
        let victimSession = try service.decode(SessionAddResponse.self, try await service.post(VerificationAPI.sessionAdd, json: session, headers: victim)).sessionId
        let thiefSession = try service.decode(SessionAddResponse.self, try await service.post(VerificationAPI.sessionAdd, json: session, headers: thief)).sessionId
        let earlier = try await service.dial("Earlier")
        let victimCall = try await service.dial("Victim", acd: [VerificationAPI.sessionAttribute: victimSession])
        let thiefCall = try await service.dial("Thief", acd: [VerificationAPI.sessionAttribute: thiefSession])
        let link = { (sessionId: String, rtcId: String, headers: HTTPHeaders) in
            try await service.post(VerificationAPI.integrationAdd, json: IntegrationAddRequest(sessionId: sessionId, rtcId: rtcId), headers: headers)
        }
        // Without the victim's caller token: no credential, another call's token, an agent's token.
        #expect(try service.error(try await link(thiefSession, victimCall, thief), status: 401).code == .unauthorized)
        let otherCallsToken = thief.merging(service.callerHeaders(thiefCall))
        #expect(try service.error(try await link(thiefSession, victimCall, otherCallsToken), status: 403).code == .forbidden)
        let agent = try await service.agent("Verifier", ready: nil)
        #expect(try service.error(try await link(thiefSession, victimCall, thief.merging([ECVAPI.callTokenHeader: agent.token])),
                                  status: 403).code == .forbidden)
        // Calls that have no caller to prove: an rtcId issued but not dialed, one never issued.
        #expect(try service.error(try await link(thiefSession, try await service.rtcId(), thief), status: 409).code == .invalidState)
        #expect(try service.error(try await link(thiefSession, "rtc-none", otherCallsToken), status: 404).field == "rtcId")

        // The customer links its own call, twice (a retry) without harm.
        let victimProof = victim.merging(service.callerHeaders(victimCall))
        for _ in 0..<2 { #expect(try await link(victimSession, victimCall, victimProof).status == 200) }
        // Even with the victim's token, a linked call is not linked again; nor does a linked session take another call.
        #expect(try service.error(try await link(thiefSession, victimCall, thief.merging(service.callerHeaders(victimCall))),
                                  status: 409).code == .invalidState)
        #expect(try service.error(try await link(victimSession, thiefCall, victim.merging(service.callerHeaders(thiefCall))),
                                  status: 409).code == .invalidState)
        #expect(try await link(thiefSession, thiefCall, otherCallsToken).status == 200)

        // Session/Update moves only the session's own call: the thief's flags lift the thief's call, not the victim's.
        #expect(service.service.acd.queueInfo(rtcId: victimCall).position == 2)
        let lift = SessionUpdateRequest(sessionId: thiefSession, hearingImpaired: true, visuallyImpaired: false)
        #expect(try await service.post(VerificationAPI.sessionUpdate, json: lift, headers: thief).status == 200)
        #expect(service.service.acd.queueInfo(rtcId: thiefCall).position == 1)
        #expect(service.service.acd.queueInfo(rtcId: victimCall).position == 3)
        #expect(service.service.acd.queueInfo(rtcId: earlier).position == 2)
        agent.socket.close()
        await service.stop()
    }

    /// Flags set between the DialEx and the link (the SDK links after dialing) reach the call with the link.
    @Test func aLinkGivesTheCallTheSessionsFlags() async throws {
        let service = try await start()
        let headers = bearer(try await token(service))
        let id = try service.decode(SessionAddResponse.self, try await service.post(VerificationAPI.sessionAdd, json: session, headers: headers)).sessionId
        _ = try await service.dial("Earlier")
        let rtcId = try await service.dial(acd: [VerificationAPI.sessionAttribute: id])
        #expect(service.service.acd.queueInfo(rtcId: rtcId).position == 2)
        let update = SessionUpdateRequest(sessionId: id, hearingImpaired: false, visuallyImpaired: true)
        #expect(try await service.post(VerificationAPI.sessionUpdate, json: update, headers: headers).status == 200)
        #expect(service.service.acd.queueInfo(rtcId: rtcId).position == 2)
        #expect(try await service.post(VerificationAPI.integrationAdd, json: IntegrationAddRequest(sessionId: id, rtcId: rtcId),
                                       headers: headers.merging(service.callerHeaders(rtcId))).status == 200)
        #expect(service.service.acd.queueInfo(rtcId: rtcId).position == 1)
        await service.stop()
    }

    /// Issue #34: 1,000 Token/Create from one address in 0.8 s filled the token table and every
    /// customer got 503 for 15 minutes. One address now gets a bounded rate and share.
    @Test func oneAddressCannotFillTheTokenTable() async throws {
        let service = try await TestService.start {
            $0.verification = VerificationBackOfficeConfiguration(apiKeys: ["k1"], maxTokensPerAddressPerMinute: 30, maxTokensPerAddress: 3,
                                                                  maxSessionsPerAddress: 2)
            $0.trustedProxies = ["127.0.0.1"] // stands for a TLS proxy: X-Forwarded-For names the client
        }
        let create = { (address: String) in
            try await service.post(VerificationAPI.tokenCreate, headers: [VerificationAPI.apiKeyHeader: "k1", "X-Forwarded-For": "203.0.113.9, \(address)"])
        }
        var statuses: [Int] = []
        for _ in 0..<40 { statuses.append(try await create("198.51.100.7").status) }
        #expect(statuses.prefix(3).allSatisfy { $0 == 200 } && statuses.dropFirst(3).allSatisfy { $0 == 429 }, "\(statuses)")
        let refused = try await create("198.51.100.7")
        #expect(refused.headers["Retry-After"] == "60")
        #expect(try service.error(refused, status: 429).code == "TOO_MANY_REQUESTS")
        // Another customer is not held back; the table is far from full.
        let other = try await create("192.0.2.44")
        #expect(other.status == 200)
        // Sessions: a bounded share per address too, whatever the tokens.
        let token = try service.decode(TokenCreateResponse.self, other).token
        let second = try service.decode(TokenCreateResponse.self, try await create("192.0.2.44")).token
        for bearerToken in [token, token, second] {
            let answer = try await service.post(VerificationAPI.sessionAdd, json: session, headers: bearer(bearerToken))
            if bearerToken == second { #expect(try service.error(answer, status: 429).code == "TOO_MANY_SESSIONS") } else { #expect(answer.status == 200) }
        }
        await service.stop()
    }

    /// The per-minute rates, apart from the shares.
    @Test func tokenAndSessionCreationAreRateLimitedPerAddress() async throws {
        let service = try await TestService.start {
            $0.verification = VerificationBackOfficeConfiguration(apiKeys: ["k1"], maxTokensPerAddressPerMinute: 2,
                                                                  maxSessionsPerAddressPerMinute: 3)
        }
        let headers = bearer(try await token(service))
        _ = try await token(service)
        _ = try service.error(try await service.post(VerificationAPI.tokenCreate, headers: [VerificationAPI.apiKeyHeader: "k1"]), status: 429)
        for _ in 0..<3 { #expect(try await service.post(VerificationAPI.sessionAdd, json: session, headers: headers).status == 200) }
        let refused = try await service.post(VerificationAPI.sessionAdd, json: session, headers: headers)
        #expect(try service.error(refused, status: 429).code == "TOO_MANY_REQUESTS" && refused.headers["Retry-After"] == "60")
        await service.stop()
    }
}
