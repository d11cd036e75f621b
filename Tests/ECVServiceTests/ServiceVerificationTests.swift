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
        #expect(try await service.post(VerificationAPI.integrationAdd, json: IntegrationAddRequest(sessionId: id, rtcId: rtcId), headers: headers).status == 200)
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
}
