import ECVService
import Foundation
import Testing

/// `ecv demo --kyc` and `ecv kyc`: the identity-verification call from the command line.
@Suite(.serialized) struct KycCLITests {
    @Test func theKycDemoRunsAWholeVerificationCallAndListsEveryDelegateCallInOrder() async throws {
        let (status, stdout, stderr) = try await ECVProcess.run(["demo", "--kyc"], timeout: .seconds(60))
        #expect(status == 0, "\(stderr)")
        let summary = try #require(stdout.components(separatedBy: "Delegate calls, in order:").last)
        let calls = summary.split(separator: "\n").compactMap { line -> String? in
            let parts = line.trimmingCharacters(in: .whitespaces).split(separator: " ", maxSplits: 1)
            guard parts.count == 2, parts[0].hasSuffix("."), Int(parts[0].dropLast()) != nil else { return nil }
            return String(parts[1].prefix { $0 != "(" })
        }
        #expect(calls == ["tokenCreateCompleted", "initializeCompleted", "integrationAddCompleted", "callStarted",
                          "agentRequest", "agentRequest", "agentRequest", "ocrRetryRequested", "agentRequest", "faceRetryRequested",
                          "agentRequest", "callResultCompleted", "hangupConfirmation", "sessionCloseCompleted"])
        #expect(stdout.contains("agentRequest(event: .flashOpen, lastEvent: .none)"))
        #expect(stdout.contains("flash on: caller answered accepted"))
        #expect(stdout.contains("flash off: caller answered refused"))
        #expect(stdout.contains("OCR_RETRY: customer answered started, SUCCEEDED (document read)"))
        #expect(stdout.contains("Verdict: APPROVED (documents and face match) for REF123456"))
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
