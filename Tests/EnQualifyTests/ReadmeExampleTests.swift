import ECVAgent
import ECVTestSupport
import EnQualify
import Testing

/// The README's example (ReadmeExample.swift) in a real call: it initializes, starts the call,
/// answers the agent's torch and OCR requests, and gets the verdict.
@Suite(.serialized) struct ReadmeExampleTests {
    @Test func theReadmeExampleRunsAVerificationCall() async throws {
        let backend = try await verificationBackend()
        let bot = try await backend.agent(name: "Verifier")
        let screen = VerificationScreen(agentPicture: CountingRenderer(), askUser: { _ in true })
        screen.start(baseURL: backend.url, apiKey: testAPIKey)
        try await eventually(.seconds(15), "the agent took the call") { !bot.calls.isEmpty }
        let verifier = try #require(bot.calls.first)
        try await eventually(.seconds(10), "the text channel") { verifier.eventHistory.contains(.textChannelOpen) }
        try await eventually(.seconds(10), "the call started") { screen.videoCall.videoCall?.webRtcConnection?.isConnected == true }
        #expect(try await verifier.requestFlash(true) == .unavailable) // approved, but the example has no torch
        #expect(try await verifier.requestRetry(.ocr, timeout: .seconds(10)).outcome == .succeeded)
        try await verifier.postVerdict(result: "APPROVED", description: "documents match")
        try await eventually(.seconds(10), "the verdict") { screen.videoCall.callResult?.result == "APPROVED" }
        await verifier.hangup()
        try await finish(screen.videoCall)
        await bot.logout()
        await backend.close()
    }
}
