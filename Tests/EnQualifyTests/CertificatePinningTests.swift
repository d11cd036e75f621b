import ECV
import ECVAgent
import ECVProtocol
import ECVService
import ECVTestSupport
import EnQualify
import Foundation
import Testing

/// BaseModelVideoCall's certificate lists pin the back office and ECV API (MAPI) and the call's
/// signalling separately, in DER and Base64 form, over a real TLS service; a wrong certificate
/// refuses the connection with a clear error, a malformed one fails `initialize`.
@Suite(.serialized) struct CertificatePinningTests {
    private func tlsBackend(_ certificates: TestCertificates) async throws -> Backend {
        try await verificationBackend { configuration in
            try? configuration.serveTLS(certificateFile: certificates.certificateFile, privateKeyFile: certificates.keyFile)
        }
    }

    /// The DER of the PEM certificate in `file`.
    private func der(ofPEM file: String) throws -> Data {
        let pem = try String(contentsOfFile: file, encoding: .utf8)
        let body = pem.split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()
        return try #require(Data(base64Encoded: body))
    }

    @Test func derAndBase64ListsPinTheAPIAndTheSignallingOfACall() async throws {
        let certificates = try TestCertificates.shared.get()
        let backend = try await tlsBackend(certificates)
        #expect(backend.url.hasPrefix("https://"))
        let leafBase64 = try der(ofPEM: certificates.certificateFile).base64EncodedString()
        let bot = try await backend.agent(name: "Verifier") { configuration in
            configuration.trustedCAFile = certificates.caFile
            configuration.pinnedCertificates = [certificates.publicKeyPin]
        }
        let delegate = RecordingDelegate()
        // No CA store knows the test CA: the pins alone admit the server.
        let call = try await initializedCall(backend, delegate: delegate, baseModel: BaseModelVideoCall(
            mapiCertificateList: [certificates.derFile], signallingCertificateBase64List: [leafBase64],
            baseURL: backend.url, apiKey: testAPIKey))
        try call.startVideoCall()
        try await delegate.waitFor("callStarted")
        call.endVideoCall()
        try await delegate.waitFor("hangupConfirmation")
        try await finish(call)
        await bot.logout()
        await backend.close()
    }

    @Test func aWrongCertificateRefusesTheConnectionWithAClearError() async throws {
        let certificates = try TestCertificates.shared.get()
        let backend = try await tlsBackend(certificates)
        let other = try der(ofPEM: certificates.directory.appendingPathComponent("other.pem").path)
        let otherFile = certificates.directory.appendingPathComponent("other-\(UUID().uuidString.prefix(6)).der")
        try other.write(to: otherFile)

        // MAPI pinned to another certificate: no token, nothing reaches the back office.
        let apiDelegate = RecordingDelegate()
        let apiCall = EnQualifyVideoCall()
        apiCall.initialize(apiDelegate, sessionModel: sessionModel(),
                           baseModel: BaseModelVideoCall(mapiCertificateList: [otherFile.path], baseURL: backend.url, apiKey: testAPIKey))
        try await apiDelegate.waitFor("tokenCreateFailed")
        #expect(apiCall.lastError?.contains("matches none of the MAPI certificates") == true)
        #expect(!backend.service.log.entries.contains { $0.message.contains("/kyc/api/Token/Create") })

        // Signalling pinned to another certificate (Base64 form), MAPI right: initialized, but the room is refused.
        let bot = try await backend.agent(name: "Verifier") { configuration in
            configuration.trustedCAFile = certificates.caFile
            configuration.pinnedCertificates = [certificates.publicKeyPin]
        }
        let delegate = RecordingDelegate()
        let call = try await initializedCall(backend, delegate: delegate, baseModel: BaseModelVideoCall(
            mapiCertificateList: [certificates.derFile], signallingCertificateBase64List: [other.base64EncodedString()],
            baseURL: backend.url, apiKey: testAPIKey))
        try call.startVideoCall()
        try await delegate.waitFor("sessionRoomFailed")
        #expect(!delegate.trail.contains("callStarted"))
        #expect(call.lastError?.contains("JOIN_ROOM_FAILED") == true)
        try await finish(call)
        await bot.logout()
        await backend.close()
    }

    @Test func aMalformedCertificateFailsInitializeNamingIt() async throws {
        let certificates = try TestCertificates.shared.get()
        let notACertificate = certificates.directory.appendingPathComponent("leaf.key").path
        let delegate = RecordingDelegate()
        let call = EnQualifyVideoCall()
        call.initialize(delegate, sessionModel: sessionModel(), baseModel: BaseModelVideoCall(
            mapiCertificateList: [certificates.derFile, notACertificate], baseURL: "https://127.0.0.1:9", apiKey: testAPIKey))
        try await delegate.waitFor("initializeFailed")
        #expect(delegate.trail.first?.hasPrefix("initializeFailed(mapiCertificateList[1]: ") == true)
        call.initialize(delegate, sessionModel: sessionModel(), baseModel: BaseModelVideoCall(
            mapiCertificateBase64List: ["not base64 at all, and long enough to be taken for a certificate by mistake: !!!!"],
            baseURL: "https://127.0.0.1:9", apiKey: testAPIKey))
        try await eventually(.seconds(5), "the second initializeFailed") { delegate.trail.count == 2 }
        #expect(delegate.trail[1] == "initializeFailed(mapiCertificateBase64List[0]: not the Base64 of a DER certificate)")
    }
}
