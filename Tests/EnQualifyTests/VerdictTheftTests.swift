import ECV
import ECVAgent
import ECVProtocol
import ECVService
import ECVTestSupport
import EnQualify
import Foundation
import Testing

/// Issue #34's theft on a real verification call: another app user (the API key is in every
/// app) makes a back-office session of its own, links the victim's rtcId to it (rtcIds are not
/// secret) and waits for the agent's verdict. Before the fix the link answered 200, the verdict
/// went to the thief and the victim's SDK got `callResultFailed`.
@Suite(.serialized) struct VerdictTheftTests {
    @Test func anotherCustomersSessionCannotTakeTheVerdict() async throws {
        let backend = try await verificationBackend()
        let bot = try await backend.agent(name: "Verifier")
        let delegate = RecordingDelegate()
        let call = try await initializedCall(backend, delegate: delegate, reference: "REF-VICTIM")
        try call.startVideoCall()
        try await eventually(.seconds(15), "the agent bot took the call") { !bot.calls.isEmpty }
        let verifier = try #require(bot.calls.first)
        try await delegate.waitFor("callStarted")
        let victimCall = try #require(call.videoCall?.rtcId)

        let thief = Thief(sdk: try backend.sdk(), base: backend.url)
        let token = try await thief.token()
        let session = try await thief.session(token: token)
        let link = IntegrationAddRequest(sessionId: session, rtcId: victimCall)
        #expect(try await thief.send(VerificationAPI.integrationAdd, link, token: token).status == 401)
        #expect(try await thief.send(VerificationAPI.integrationAdd, link, token: token,
                                     headers: [ECVAPI.callTokenHeader: "0123456789abcdef0123456789abcdef"]).status == 403)
        let lift = SessionUpdateRequest(sessionId: session, hearingImpaired: true, visuallyImpaired: true)
        #expect(try await thief.send(VerificationAPI.sessionUpdate, lift, token: token).status == 200)
        let victimRecord = try #require(backend.service.acd.snapshot().interactions.first { $0.rtcId == victimCall })
        #expect(victimRecord.priority == 0)

        try await verifier.postVerdict(result: "APPROVED", description: "documents and face match")
        try await delegate.waitFor("callResultCompleted")
        #expect(call.callResult?.reference == "REF-VICTIM")
        let stolen = try await thief.sdk.pinnedExchange(method: "GET", url: thief.base + VerificationAPI.callResult + "?sessionId=" + session,
                                                        headers: ["Authorization": "Bearer \(token)"])
        #expect(stolen.status == 404)
        #expect(try ECVJSON.decode(ServiceErrorResponse.self, from: stolen.body).code == "NO_RESULT")
        #expect(!delegate.trail.contains("callResultFailed"))
        await verifier.hangup()
        try await delegate.waitFor("hangupConfirmation")
        try await finish(call)
        await bot.logout()
        await backend.close()
    }
}

/// The attacker: the app's API key and plain requests, no call of the victim's.
private struct Thief {
    let sdk: ECVSdk
    let base: String

    func send(_ path: String, _ body: some Encodable, token: String? = nil,
              headers: [String: String] = [:]) async throws -> PinnedExchangeResponse {
        var all = headers
        if let token { all["Authorization"] = "Bearer \(token)" }
        return try await sdk.pinnedExchange(method: "POST", url: base + path, headers: all, body: try ECVJSON.encode(body))
    }

    func token() async throws -> String {
        let answer = try await send(VerificationAPI.tokenCreate, TokenCreateRequest(), headers: [VerificationAPI.apiKeyHeader: testAPIKey])
        return try ECVJSON.decode(TokenCreateResponse.self, from: answer.body).token
    }

    func session(token: String) async throws -> String {
        let answer = try await send(VerificationAPI.sessionAdd, sessionModel(reference: "REF-THIEF"), token: token)
        return try ECVJSON.decode(SessionAddResponse.self, from: answer.body).sessionId
    }
}
