import ECV
import ECVAgent
import ECVProtocol
import ECVService
import ECVTestSupport
import EnQualify
import Foundation
import GLibCore
import Testing

/// The API key the test back offices accept.
let testAPIKey = "kyc-test-key"

/// Settings small enough for loopback calls; one retry of each step per call.
let testSettings = VerificationSettings(queue: "default", videoWidth: 320, videoHeight: 240, maxOcrRetries: 1, maxFaceRetries: 1,
                                        flashApprovalTimeoutMs: 5000)

/// A reference service whose back office takes `testAPIKey`.
func verificationBackend(settings: [String: VerificationSettings] = ["*": testSettings],
                         configure: (inout ReferenceServiceConfiguration) -> Void = { _ in }) async throws -> Backend {
    try await Backend.start { configuration in
        configuration.verification = VerificationBackOfficeConfiguration(apiKeys: [testAPIKey], settings: settings)
        configure(&configuration)
    }
}

func sessionModel(reference: String = "REF-1", callType: String = "NewCustomer", identityNo: String? = "12345678901") -> SessionModelVideoCall {
    SessionModelVideoCall(callType: callType, userName: "Enqura", surname: "Information", phone: "+905551234567",
                          email: "enqualifyplus@enqura.com", identityType: "ID Card", identityNo: identityNo, reference: reference)
}

/// A delegate that writes down every call, in delivery order, and can act on some.
final class RecordingDelegate: EnQualifyVideoCallDelegate {
    private let calls = Locked<[String]>([])
    private let reactions = Locked<[String: @Sendable () -> Void]>([:])
    private let requestReactions = Locked<[AgentRequestEvent: @Sendable () -> Void]>([:])

    var trail: [String] { calls.value }

    /// Runs `action` (on the delegate's context) whenever the call named `name` arrives.
    func on(_ name: String, _ action: @escaping @Sendable () -> Void) { reactions.withLock { $0[name] = action } }
    func onRequest(_ event: AgentRequestEvent, _ action: @escaping @Sendable () -> Void) { requestReactions.withLock { $0[event] = action } }

    private func record(_ entry: String, name: String? = nil) {
        calls.withLock { $0.append(entry) }
        if let action = reactions.value[name ?? entry] { action() }
    }

    func waitFor(_ entry: String, timeout: Duration = .seconds(20)) async throws {
        try await eventually(timeout, "delegate call \(entry); saw \(trail)") { self.trail.contains { $0.hasPrefix(entry) } }
    }

    func agentRequest(event: AgentRequestEvent, lastEvent: AgentRequestEvent) {
        calls.withLock { $0.append("agentRequest(\(event), last: \(lastEvent))") }
        requestReactions.value[event]?()
    }
    func ocrRetryRequested() { record("ocrRetryRequested") }
    func faceRetryRequested() { record("faceRetryRequested") }
    func callStarted() { record("callStarted") }
    func hangupConfirmation() { record("hangupConfirmation") }
    func videoCallFailed(error: String) { record("videoCallFailed", name: "videoCallFailed") }
    func initializeCompleted(moduleName: String) { record("initializeCompleted(\(moduleName))", name: "initializeCompleted") }
    func sessionCloseCompleted(status: String) { record("sessionCloseCompleted(\(status))", name: "sessionCloseCompleted") }
    func sessionCloseFailed() { record("sessionCloseFailed") }
    func sessionAddFailed() { record("sessionAddFailed") }
    func sessionUpdateFailed() { record("sessionUpdateFailed") }
    func settingGetFailed() { record("settingGetFailed") }
    func tokenCreateCompleted() { record("tokenCreateCompleted") }
    func tokenCreateFailed() { record("tokenCreateFailed") }
    func integrationAddCompleted() { record("integrationAddCompleted") }
    func integrationAddFailed(errorMessage: String) { record("integrationAddFailed", name: "integrationAddFailed") }
    func initializeFailed(with key: String) { record("initializeFailed(\(key))", name: "initializeFailed") }
    func sessionRoomFailed() { record("sessionRoomFailed") }
    func callResultCompleted(result: String, description: String, reference: String) {
        record("callResultCompleted(\(result), \(description), \(reference))", name: "callResultCompleted")
    }
    func callResultFailed() { record("callResultFailed") }
    func signingSetCompleted() { record("signingSetCompleted") }
    func signingCompleted() { record("signingCompleted") }
    func signingSetFailed(error: String) { record("signingSetFailed", name: "signingSetFailed") }
}

/// A torch that works and says how it was switched.
final class TestTorch: EnQualifyTorch {
    let switches = Locked<[Bool]>([])
    func setTorch(on: Bool) async -> Bool {
        switches.withLock { $0.append(on) }
        return true
    }
}

/// An initialized facade (initializeCompleted delivered) on `backend`.
func initializedCall(_ backend: Backend, delegate: RecordingDelegate, reference: String = "REF-1",
                     baseModel: BaseModelVideoCall? = nil) async throws -> EnQualifyVideoCall {
    let call = EnQualifyVideoCall()
    call.initialize(delegate, sessionModel: sessionModel(reference: reference),
                    baseModel: baseModel ?? BaseModelVideoCall(baseURL: backend.url, locale: "TR", mobileUser: "mobile",
                                                               countryCode: "TUR", apiKey: testAPIKey))
    try await delegate.waitFor("initializeCompleted")
    return call
}

/// Deinitializes each facade and waits until its call, if it had one, has ended: a test never
/// leaves a call setting up its media behind it (the process would exit under its feet).
func finish(_ calls: EnQualifyVideoCall...) async throws {
    for call in calls {
        let video = call.videoCall
        call.deinitialize(deinitializeCore: true)
        if let video { try await eventually(.seconds(15), "call \(video.rtcId) ended") { video.isEnded } }
    }
}
