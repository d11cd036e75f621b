import ECV
import ECVAgent
import ECVProtocol
import ECVService
import ECVTestSupport
import EnQualify
import Foundation
import Testing

/// A whole verification call against the reference service and an agent bot: the torch asked
/// three times (approved, refused, approved without a torch), the OCR step repeated and then
/// refused past the limit, the face step repeated and failed, the verdict, the hangup and the
/// session's close, with the delegate's calls in the document's order.
@Suite(.serialized) struct VerificationCallTests {
    @Test func aVerificationCallRunsEveryAgentRequestAndDeliversTheVerdict() async throws {
        let backend = try await verificationBackend()
        let bot = try await backend.agent(name: "Verifier")
        let delegate = RecordingDelegate()
        let call = try await initializedCall(backend, delegate: delegate)
        let torch = TestTorch()
        call.torch = torch
        // The app's side: ask the "user", who approves the torch on and refuses it off, repeats
        // each step when asked and reports its outcome.
        delegate.onRequest(.flashOpen) { try? call.openTorch(isApproved: true) } // the user approves
        delegate.onRequest(.flashClose) { try? call.closeTorch(isApproved: false) } // the user refuses
        delegate.onRequest(.ocrRetry) {
            do { try call.ocrRetry() } catch {} // the second request is past the limit: the agent hears LIMIT_REACHED
        }
        delegate.onRequest(.faceRetry) { try? call.faceRetry() } // within the limit: cannot fail here
        delegate.on("ocrRetryRequested") {
            try? call.retryCompleted(kind: .ocr, success: true, detail: "MRZ read") // the call is live: cannot fail here
            try? call.backToVideoCall() // the same
        }
        delegate.on("faceRetryRequested") {
            try? call.retryCompleted(kind: .face, success: false, detail: "no face found") // the call is live: cannot fail here
            try? call.backToVideoCall() // the same
        }
        let renderer = CountingRenderer()
        try call.startVideoCall(remoteVideoRenderer: renderer)
        #expect(throws: EnQualifyError.callAlreadyStarted) { try call.startVideoCall() }

        let verifier = try await takenCall(bot)
        try await delegate.waitFor("callStarted")
        try await eventually(.seconds(10), "the agent's text channel") { verifier.eventHistory.contains(.textChannelOpen) }
        try await eventually(.seconds(10), "the agent's picture at the customer") { renderer.count > 5 }

        #expect(try await verifier.requestFlash(true) == .accepted)
        #expect(try await verifier.requestFlash(false) == .refused)
        call.torch = nil
        #expect(try await verifier.requestFlash(true) == .unavailable)
        #expect(torch.switches.value == [true])

        let ocr = try await verifier.requestRetry(.ocr, timeout: .seconds(10))
        #expect(ocr == VerificationRetryAnswer(started: true, outcome: .succeeded, detail: "MRZ read"))
        let again = try await verifier.requestRetry(.ocr, timeout: .seconds(10))
        #expect(again.outcome == .limitReached)
        let face = try await verifier.requestRetry(.face, timeout: .seconds(10))
        #expect(face == VerificationRetryAnswer(started: true, outcome: .failed, detail: "no face found"))
        // The customer paused its camera for each step and resumed it: the agent saw it.
        try await eventually(.seconds(5), "two camera pauses and resumes") {
            verifier.eventHistory.filter { $0 == .callerStatus(media: .video, muted: true) }.count == 2
                && verifier.eventHistory.filter { $0 == .callerStatus(media: .video, muted: false) }.count == 2
        }

        try await verifier.postVerdict(result: "APPROVED", description: "documents and face match")
        try await delegate.waitFor("callResultCompleted")
        #expect(call.callResult?.result == "APPROVED")
        await verifier.hangup()
        try await delegate.waitFor("hangupConfirmation")
        #expect(throws: EnQualifyError.notInCall) { try call.ocrRetry() }
        call.closeSession()
        try await delegate.waitFor("sessionCloseCompleted")
        await call.delegateCallsDelivered()

        #expect(delegate.trail == [
            "tokenCreateCompleted", "initializeCompleted(EnQualifyVideoCall)", "integrationAddCompleted", "callStarted",
            "agentRequest(flashOpen, last: none)", "agentRequest(flashClose, last: flashOpen)", "agentRequest(flashOpen, last: flashClose)",
            "agentRequest(ocrRetry, last: flashOpen)", "ocrRetryRequested", "agentRequest(ocrRetry, last: ocrRetry)",
            "agentRequest(faceRetry, last: ocrRetry)", "faceRetryRequested",
            "agentRequest(callResult, last: faceRetry)", "callResultCompleted(APPROVED, documents and face match, REF-1)",
            "hangupConfirmation", "sessionCloseCompleted(CLOSED)",
        ])
        try await finish(call)
        await bot.logout()
        await backend.close()
    }

    @Test func aCallThatEndsWithoutAVerdictIsCallResultFailed() async throws {
        let backend = try await verificationBackend()
        let bot = try await backend.agent(name: "Verifier")
        let delegate = RecordingDelegate()
        let call = try await initializedCall(backend, delegate: delegate, reference: "REF-2")
        try call.startVideoCall()
        let verifier = try await takenCall(bot)
        try await delegate.waitFor("callStarted")
        #expect(verifier.rtcId == call.videoCall?.rtcId)
        call.endVideoCall()
        try await delegate.waitFor("callResultFailed")
        await call.delegateCallsDelivered()
        #expect(Array(delegate.trail.suffix(2)) == ["hangupConfirmation", "callResultFailed"])
        try await finish(call)
        await bot.logout()
        await backend.close()
    }

    @Test func anUnansweredTorchRequestIsRefusedAndTheAgentScriptReadsVerificationSteps() async throws {
        var quick = testSettings
        quick.flashApprovalTimeoutMs = 300
        let backend = try await verificationBackend(settings: ["*": quick])
        let bot = try await backend.agent(name: "Verifier")
        let delegate = RecordingDelegate()
        let call = try await initializedCall(backend, delegate: delegate, reference: "REF-3")
        call.torch = TestTorch()
        try call.startVideoCall()
        let verifier = try await takenCall(bot)
        try await delegate.waitFor("callStarted")
        try await eventually(.seconds(10), "the agent's text channel") { verifier.eventHistory.contains(.textChannelOpen) }
        // Nobody answers: never assumed approved.
        #expect(try await verifier.requestFlash(true) == .refused)
        #expect(throws: EnQualifyError.noPendingTorchRequest) { try call.openTorch(isApproved: true) }
        #expect(delegate.trail.contains("agentRequest(flashOpen, last: none)"))
        call.endVideoCall()
        try await delegate.waitFor("hangupConfirmation")
        try await finish(call)
        await bot.logout()
        await backend.close()

        let script = try AgentScript("flash on, ocr retry, face retry, nfc retry, verdict approved \"documents and face match\"")
        #expect(script.steps == [.flash(on: true), .retry(.ocr), .retry(.face), .retry(.nfc),
                                 .verdict(result: "APPROVED", reason: "documents and face match")])
        #expect(throws: AgentScriptError.self) { try AgentScript("verdict approved! \"x\"") }
        #expect(throws: AgentScriptError.self) { try AgentScript("ocr again") }
    }

    @Test func givingUpInTheQueueIsAHangupNotAFailure() async throws {
        let backend = try await verificationBackend()
        let delegate = RecordingDelegate()
        let call = try await initializedCall(backend, delegate: delegate, reference: "REF-4")
        try call.startVideoCall()
        try await eventually(.seconds(10), "the customer queued") { backend.service.acd.snapshot().interactions.count == 1 }
        call.endVideoCall()
        try await delegate.waitFor("hangupConfirmation")
        await call.delegateCallsDelivered()
        #expect(delegate.trail == ["tokenCreateCompleted", "initializeCompleted(EnQualifyVideoCall)", "integrationAddCompleted",
                                   "hangupConfirmation"])
        try await finish(call)
        await backend.close()
    }

    /// The call the bot took (it accepts every offer).
    private func takenCall(_ bot: AgentBot) async throws -> AgentCall {
        try await eventually(.seconds(15), "the agent bot took the call") { !bot.calls.isEmpty }
        return try #require(bot.calls.first)
    }
}
