import ECV
import ECVAgent
import ECVProtocol
import ECVService
import ECVTestSupport
import EnQualify
import Foundation
import Testing

/// The session model's flags as the SDK acts on them (canAutoClose, handicapped, isContinue),
/// certificate names resolved like the document's bundle resources, and every failure delegate
/// no other test provokes.
@Suite(.serialized) struct SessionModelAndFailureTests {
    private func model(reference: String, canAutoClose: Bool = false, isContinue: Bool = false, handicapped: Bool? = false) -> SessionModelVideoCall {
        SessionModelVideoCall(callType: "NewCustomer", userName: "Enqura", surname: "Information", identityType: "ID Card",
                              identityNo: "12345678901", reference: reference, canAutoClose: canAutoClose, isContinue: isContinue,
                              handicapped: handicapped)
    }

    private func initialized(_ backend: Backend, _ delegate: RecordingDelegate, _ model: SessionModelVideoCall) async throws -> EnQualifyVideoCall {
        let call = EnQualifyVideoCall()
        call.initialize(delegate, sessionModel: model, baseModel: BaseModelVideoCall(baseURL: backend.url, apiKey: testAPIKey))
        try await delegate.waitFor("initializeCompleted")
        return call
    }

    /// canAutoClose: the session closes itself after its call's last word (here callResultFailed);
    /// closing it again is sessionCloseFailed. Without it, the session stays open.
    @Test func canAutoCloseClosesTheSessionWhenItsCallIsOver() async throws {
        let backend = try await verificationBackend()
        let bot = try await backend.agent(name: "Verifier")
        for autoClose in [true, false] {
            let delegate = RecordingDelegate()
            let call = try await initialized(backend, delegate, model(reference: "REF-AUTO-\(autoClose)", canAutoClose: autoClose))
            try call.startVideoCall()
            try await delegate.waitFor("callStarted")
            call.endVideoCall()
            try await delegate.waitFor("callResultFailed")
            if autoClose {
                try await delegate.waitFor("sessionCloseCompleted")
                #expect(Array(delegate.trail.suffix(3)) == ["hangupConfirmation", "callResultFailed", "sessionCloseCompleted(CLOSED)"],
                        "\(delegate.trail)")
                call.closeSession()
                try await delegate.waitFor("sessionCloseFailed")
                #expect(call.lastError?.contains("closed") == true, "\(call.lastError ?? "")")
            } else {
                await call.delegateCallsDelivered()
                #expect(!delegate.trail.contains { $0.hasPrefix("sessionClose") }, "the app closes it: \(delegate.trail)")
                call.closeSession()
                try await delegate.waitFor("sessionCloseCompleted")
            }
            try await finish(call)
            try await eventually(.seconds(10), "the verifier is free") { bot.calls.isEmpty }
        }
        await bot.logout()
        await backend.close()
    }

    /// handicapped: true in the session model routes the customer as hearing impaired (priority),
    /// with no setHandicappedStatus call; isContinue is sent to the back office as given.
    @Test func handicappedRoutesFirstAndIsContinueIsSent() async throws {
        let backend = try await verificationBackend()
        let earlier = try await initialized(backend, RecordingDelegate(), model(reference: "REF-PLAIN"))
        try earlier.startVideoCall()
        try await eventually(.seconds(10), "the first customer queued") { backend.service.acd.snapshot().interactions.count == 1 }
        let impaired = try await initialized(backend, RecordingDelegate(), model(reference: "REF-HANDICAPPED", isContinue: true, handicapped: true))
        try impaired.startVideoCall()
        try await eventually(.seconds(10), "the second customer queued") { backend.service.acd.snapshot().interactions.count == 2 }
        let queued = try #require(backend.service.acd.snapshot().interactions.first { $0.attributes["reference"] == "REF-HANDICAPPED" })
        #expect(queued.acdAttributes[ACDAttributeKey.hearingImpaired] == "true")
        #expect(queued.priority == backend.service.acd.configuration.accessibilityPriority)
        #expect(backend.service.acd.queueInfo(rtcId: queued.rtcId).position == 1, "ahead of the customer who came first")
        // What Session/Add carries: the model as JSON, both flags as given.
        let body = try #require(String(data: try JSONEncoder().encode(model(reference: "R", isContinue: true, handicapped: true)), encoding: .utf8))
        #expect(body.contains(#""isContinue":true"#) && body.contains(#""handicapped":true"#), "\(body)")
        try await finish(earlier, impaired)
        await backend.close()
    }

    /// The document's `mapiCertificateList: ["MAPI_CERT_1", …]` names bundle resources: here a
    /// name is looked up in `certificateDirectory` (with .der, .cer, .crt, .pem), and pins.
    @Test func certificateNamesResolveInTheCertificateDirectory() async throws {
        let certificates = try TestCertificates.shared.get()
        let backend = try await verificationBackend { configuration in
            try? configuration.serveTLS(certificateFile: certificates.certificateFile, privateKeyFile: certificates.keyFile)
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ecv-cert-names-\(getpid())")
        try? FileManager.default.removeItem(at: directory)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.copyItem(atPath: certificates.derFile, toPath: directory.appendingPathComponent("MAPI_CERT_1.der").path)
        try FileManager.default.copyItem(atPath: certificates.derFile, toPath: directory.appendingPathComponent("AI_CERT_1").path)

        let delegate = RecordingDelegate()
        let call = EnQualifyVideoCall()
        call.initialize(delegate, sessionModel: model(reference: "REF-NAMES"), baseModel: BaseModelVideoCall(
            signallingCertificateList: ["AI_CERT_1"], mapiCertificateList: ["MAPI_CERT_1"], baseURL: backend.url, apiKey: testAPIKey,
            certificateDirectory: directory.path))
        // No CA store knows the test CA: only the pins, found by name, admit the back office.
        try await delegate.waitFor("initializeCompleted")
        try await finish(call)

        // A name the folder lacks, and names that would leave it, fail initialize naming the entry.
        for (entry, index) in [("MAPI_CERT_2", 1), ("..", 1), (".hidden", 1)] {
            let refused = RecordingDelegate()
            let other = EnQualifyVideoCall()
            other.initialize(refused, sessionModel: model(reference: "REF-MISSING"), baseModel: BaseModelVideoCall(
                mapiCertificateList: ["MAPI_CERT_1", entry], baseURL: backend.url, apiKey: testAPIKey, certificateDirectory: directory.path))
            try await refused.waitFor("initializeFailed")
            #expect(refused.trail.first?.hasPrefix("initializeFailed(mapiCertificateList[\(index)]: \"\(entry)\" is not a readable certificate file") == true,
                    "\(refused.trail)")
        }
        await backend.close()
    }

    /// integrationAddFailed (the session was closed before the call), signingSetFailed (a document
    /// without a name; completing what was never set), sessionCloseFailed (no session yet),
    /// videoCallFailed (the ECV service refused the dial).
    @Test func eachRemainingFailureDelegateIsProvoked() async throws {
        let backend = try await verificationBackend()
        let delegate = RecordingDelegate()
        let call = try await initialized(backend, delegate, model(reference: "REF-FAILURES"))
        call.setSigning(documentName: "", document: "text")
        try await delegate.waitFor("signingSetFailed")
        #expect(call.lastError?.contains("documentName") == true, "\(call.lastError ?? "")")
        call.completeSigning()
        try await eventually(.seconds(10), "the second signingSetFailed") { delegate.trail.filter { $0 == "signingSetFailed" }.count == 2 }
        #expect(call.lastError?.contains("Signing/Set") == true, "\(call.lastError ?? "")")
        call.closeSession()
        try await delegate.waitFor("sessionCloseCompleted")
        try call.startVideoCall()
        try await delegate.waitFor("integrationAddFailed")
        #expect(call.lastError?.contains("closed") == true && !delegate.trail.contains("callStarted"), "\(call.lastError ?? "")")
        try await finish(call)

        let unopened = RecordingDelegate()
        let never = EnQualifyVideoCall()
        never.initialize(unopened, sessionModel: nil, baseModel: nil)
        never.closeSession()
        try await unopened.waitFor("sessionCloseFailed")

        let refusedDial = RecordingDelegate()
        let dialing = try await initialized(backend, refusedDial, model(reference: "REF-DIAL"))
        backend.service.script.failNextDial(status: 500)
        try dialing.startVideoCall()
        try await refusedDial.waitFor("videoCallFailed")
        #expect(dialing.lastError?.contains("ERROR_DIALING") == true, "\(dialing.lastError ?? "")")
        #expect(!refusedDial.trail.contains("callStarted") && !refusedDial.trail.contains("hangupConfirmation"))
        try await finish(dialing)
        await backend.close()
    }
}
