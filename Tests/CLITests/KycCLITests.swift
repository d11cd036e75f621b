import ECVService
import Foundation
import Testing

/// `ecv demo --kyc` and `ecv kyc`: the identity-verification call from the command line.
@Suite(.serialized) struct KycCLITests {
    /// With `--json` (only JSON objects on stdout): every delegate call in order, the agent's
    /// steps, and the summary with the verdict.
    @Test func theKycDemoRunsAWholeVerificationCallAndListsEveryDelegateCallInOrder() async throws {
        let (status, stdout, stderr) = try await ECVProcess.run(["demo", "--kyc", "--json"], timeout: .seconds(60))
        #expect(status == 0, "\(stderr)")
        let lines = stdout.split(separator: "\n")
        let objects = lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(objects.count == lines.count, "only JSON objects: \(stdout)")
        let summary = try #require(objects.last, "\(stdout)")
        #expect(summary["event"] as? String == "summary")
        let calls = (summary["delegateCalls"] as? [String] ?? []).map { String($0.prefix { $0 != "(" }) }
        #expect(calls == ["tokenCreateCompleted", "initializeCompleted", "integrationAddCompleted", "callStarted",
                          "agentRequest", "agentRequest", "agentRequest", "ocrRetryRequested", "agentRequest", "faceRetryRequested",
                          "agentRequest", "callResultCompleted", "hangupConfirmation", "sessionCloseCompleted"])
        let texts = objects.compactMap { $0["text"] as? String }
        for expected in ["agentRequest(event: .flashOpen, lastEvent: .none)", "flash on: caller answered accepted",
                         "flash off: caller answered refused", "OCR_RETRY: customer answered started, SUCCEEDED (document read)"] {
            #expect(texts.contains { $0.contains(expected) }, "\(expected) in \(texts)")
        }
        #expect(summary["verdict"] as? String == "APPROVED (documents and face match) for REF123456", "\(summary)")
    }

    @Test func kycWithARefusedAPIKeyStopsAtTheTokenAndExitsNonZero() async throws {
        let (service, base) = try await startLoopbackService { $0.verification.apiKeys = ["the-right-key"] }
        let (status, stdout, stderr) = try await ECVProcess.run(["kyc", "--service-url", base, "--api-key", "a-wrong-key"], timeout: .seconds(30))
        #expect(status == 1)
        #expect(stdout.contains("tokenCreateFailed()"))
        #expect(!stdout.contains("initializeCompleted"))
        #expect(stderr.contains("403"))
        await service.stop()
    }
}
