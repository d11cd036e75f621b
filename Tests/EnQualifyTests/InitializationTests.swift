import ECV
import ECVProtocol
import ECVService
import ECVTestSupport
import EnQualify
import Foundation
import Testing

/// The init flow as the document orders it, token → session → settings → initializeCompleted,
/// against the reference back office: each failure its own delegate method, and nothing after it.
@Suite(.serialized) struct InitializationTests {
    @Test func theHappyPathCreatesTokenSessionAndSettingsInOrder() async throws {
        let backend = try await verificationBackend()
        let delegate = RecordingDelegate()
        let call = try await initializedCall(backend, delegate: delegate)
        await call.delegateCallsDelivered()
        #expect(delegate.trail == ["tokenCreateCompleted", "initializeCompleted(EnQualifyVideoCall)"])
        #expect(call.sessionId != nil)
        #expect(call.lastError == nil)
        let paths = backend.service.log.entries.map(\.message).filter { $0.contains("/kyc/api/") }
        #expect(paths.map { $0.components(separatedBy: " → ")[0] }
                == ["POST /kyc/api/Token/Create", "POST /kyc/api/Session/Add", "GET /kyc/api/Settings/Get"])
        // Signing needs no call, only the session.
        call.setSigning(documentName: "consent.txt", document: "I agree to the video identification.")
        try await delegate.waitFor("signingSetCompleted")
        call.completeSigning()
        try await delegate.waitFor("signingCompleted")
        call.closeSession()
        try await delegate.waitFor("sessionCloseCompleted")
        #expect(delegate.trail.last == "sessionCloseCompleted(CLOSED)")
        try await finish(call)
        await backend.close()
    }

    @Test func aRefusedAPIKeyIsTokenCreateFailedAndStops() async throws {
        let backend = try await verificationBackend()
        let delegate = RecordingDelegate()
        let call = EnQualifyVideoCall()
        call.initialize(delegate, sessionModel: sessionModel(), baseModel: BaseModelVideoCall(baseURL: backend.url, apiKey: "wrong"))
        try await delegate.waitFor("tokenCreateFailed")
        await settle(call)
        #expect(delegate.trail == ["tokenCreateFailed"])
        #expect(call.lastError?.contains("403") == true)
        #expect(call.sessionId == nil)
        // Not initialized: the call cannot start, and says why.
        #expect(throws: EnQualifyError.notInitialized) { try call.startVideoCall() }
        await backend.close()
    }

    @Test func aRefusedSessionIsSessionAddFailedAndStops() async throws {
        let backend = try await verificationBackend()
        let delegate = RecordingDelegate()
        let call = EnQualifyVideoCall()
        // The back office checks the identity number: 1-32 ASCII letters or digits.
        call.initialize(delegate, sessionModel: sessionModel(identityNo: "12345 OR 1=1"),
                        baseModel: BaseModelVideoCall(baseURL: backend.url, apiKey: testAPIKey))
        try await delegate.waitFor("sessionAddFailed")
        await settle(call)
        #expect(delegate.trail == ["tokenCreateCompleted", "sessionAddFailed"])
        #expect(call.lastError?.contains("identityNo") == true)
        await backend.close()
    }

    @Test func missingSettingsAreSettingGetFailedAndStop() async throws {
        let backend = try await verificationBackend(settings: ["Existing": testSettings])
        let delegate = RecordingDelegate()
        let call = EnQualifyVideoCall()
        call.initialize(delegate, sessionModel: sessionModel(callType: "NewCustomer"),
                        baseModel: BaseModelVideoCall(baseURL: backend.url, apiKey: testAPIKey))
        try await delegate.waitFor("settingGetFailed")
        await settle(call)
        #expect(delegate.trail == ["tokenCreateCompleted", "settingGetFailed"])
        #expect(call.lastError?.contains("NO_SETTINGS") == true)
        #expect(throws: EnQualifyError.notInitialized) { try call.startVideoCall() }
        await backend.close()
    }

    @Test func missingModelsAndUnusableCertificatesFailInitializeBeforeAnythingIsSent() async throws {
        let backend = try await verificationBackend()
        let delegate = RecordingDelegate()
        let call = EnQualifyVideoCall()
        call.initialize(delegate, sessionModel: nil, baseModel: BaseModelVideoCall(baseURL: backend.url))
        try await delegate.waitFor("initializeFailed(sessionModel)")
        call.initialize(delegate, sessionModel: sessionModel(), baseModel: nil)
        try await delegate.waitFor("initializeFailed(baseModel)")
        call.initialize(delegate, sessionModel: sessionModel(), baseModel: BaseModelVideoCall(
            mapiCertificateList: ["/nonexistent/mapi.der"], baseURL: backend.url, apiKey: testAPIKey))
        try await delegate.waitFor("initializeFailed(mapiCertificateList[0]")
        call.initialize(delegate, sessionModel: sessionModel(), baseModel: BaseModelVideoCall(
            signallingCertificateBase64List: [String(repeating: "QUlDRVJU", count: 12)], baseURL: backend.url, apiKey: testAPIKey))
        try await delegate.waitFor("initializeFailed(signallingCertificateBase64List[0]: not the Base64 of a DER certificate)")
        await settle(call)
        #expect(delegate.trail.count == 4)
        #expect(delegate.trail.allSatisfy { $0.hasPrefix("initializeFailed(") })
        #expect(!backend.service.log.entries.contains { $0.message.contains("/kyc/api/") })
        await backend.close()
    }

    @Test func accessibilityAndCallControlsOutsideACallFailClearly() async throws {
        let backend = try await verificationBackend()
        let delegate = RecordingDelegate()
        let call = EnQualifyVideoCall()
        call.initialize(delegate)
        call.setHandicappedStatus(hearing: true, visually: false)
        try await delegate.waitFor("sessionUpdateFailed")
        let ready = try await initializedCall(backend, delegate: RecordingDelegate())
        #expect(throws: EnQualifyError.notInCall) { try ready.ocrRetry() }
        #expect(throws: EnQualifyError.notInCall) { try ready.faceRetry() }
        #expect(throws: EnQualifyError.notInCall) { try ready.openTorch(isApproved: true) }
        #expect(throws: EnQualifyError.notInCall) { try ready.retryCompleted(kind: .ocr, success: true) }
        #expect(throws: EnQualifyError.notInCall) { try ready.backToVideoCall() }
        try await finish(ready)
        await backend.close()
    }

    /// A failed step is the flow's last act: once its delegate call is queued, the flow is over,
    /// so the trail is complete when the queue is drained.
    private func settle(_ call: EnQualifyVideoCall) async {
        await call.delegateCallsDelivered()
    }
}
