import ECV
import ECVAgent
import ECVProtocol
import ECVService
import ECVTestSupport
import Testing

/// A whole call over HTTPS and WSS: the service with an openssl-made certificate, the SDK and the
/// agent bot verifying it against the private CA and pinning it; wrong and malformed pins fail closed.
@Suite(.serialized) struct TLSCallTests {
    private func tlsBackend(_ certificates: TestCertificates) async throws -> Backend {
        try await Backend.start { configuration in
            try? configuration.serveTLS(certificateFile: certificates.certificateFile, privateKeyFile: certificates.keyFile)
        }
    }

    @Test func aPinnedCallOverTLSConnectsWithMedia() async throws {
        let certificates = try TestCertificates.shared.get()
        let backend = try await tlsBackend(certificates)
        #expect(backend.url.hasPrefix("https://"))
        let agent = try await backend.agent { configuration in
            configuration.trustedCAFile = certificates.caFile
            configuration.pinnedCertificates = [certificates.publicKeyPin]
            configuration.signalingPinnedCertificates = [certificates.derFile]
        }
        let sdk = try backend.sdk { configuration in
            configuration.trustedCAFile = certificates.caFile
            configuration.pinnedCertificates = [certificates.certificatePin]
            configuration.signalingPinnedCertificates = [certificates.publicKeyPin]
        }
        let log = EventLog(sdk)
        let renderer = CountingRenderer()
        let call = try await placeCall(sdk, log: log, renderer: renderer)
        _ = try await log.wait(for: .WebRtcConnected, call.rtcId)
        try await eventually(.seconds(10), "the agent's picture over a pinned TLS signaling path") { renderer.count > 5 }
        call.hangup()
        #expect(try await log.wait(for: .CallEnded, call.rtcId).detail == "LOCAL_HANGUP")
        await agent.logout()
        await backend.close()
    }

    @Test func aWrongPinOrAnUntrustedCertificateFailsClosed() async throws {
        let certificates = try TestCertificates.shared.get()
        let backend = try await tlsBackend(certificates)
        // Trusted CA, but the API pin names another key: no rtcId, nothing reaches the service.
        let wrongPin = try backend.sdk { configuration in
            configuration.trustedCAFile = certificates.caFile
            configuration.pinnedCertificates = [certificates.foreignPublicKeyPin]
        }
        let pinned = try #require(await wrongPin.createVideoCall())
        #expect(pinned.lastError.name == .GET_RTC_ID_FAILED)
        // No pin and no trusted CA: the system store does not know the private CA.
        let untrusted = try backend.sdk()
        let plain = try #require(await untrusted.createVideoCall())
        #expect(plain.lastError.name == .GET_RTC_ID_FAILED)
        #expect(backend.service.log.entries.allSatisfy { !$0.message.hasPrefix("GetRtcId") })
        // The agent bot fails closed the same way.
        var configuration = AgentBotConfiguration(serviceUrl: backend.url, name: "Pinned")
        configuration.trustedCAFile = certificates.caFile
        configuration.pinnedCertificates = [certificates.foreignPublicKeyPin]
        let bot = try AgentBot(configuration: configuration)
        await #expect(throws: AgentBotError.self) { try await bot.connect() }
        #expect(backend.service.acd.snapshot().agents.isEmpty)
        await backend.close()
    }

    @Test func malformedPinsAreConfigurationErrorsAtConstruction() throws {
        for pin in ["sha256/not-base64!", "AB:CD", "", "sha256/" + String(repeating: "A", count: 10), "/nonexistent/pin.der"] {
            var sdkConfiguration = ECVSdkConfiguration(name: "bad", serviceUrl: "https://127.0.0.1:1")
            sdkConfiguration.pinnedCertificates = [pin]
            #expect(throws: ECVConfigurationError.self, "\(pin)") { try ECVSdk(config: sdkConfiguration) }
            sdkConfiguration.pinnedCertificates = []
            sdkConfiguration.signalingPinnedCertificates = [pin]
            #expect(throws: ECVConfigurationError.self, "\(pin)") { try ECVSdk(config: sdkConfiguration) }
            var botConfiguration = AgentBotConfiguration(serviceUrl: "https://127.0.0.1:1")
            botConfiguration.pinnedCertificates = [pin]
            #expect(throws: ECVConfigurationError.self, "\(pin)") { try AgentBot(configuration: botConfiguration) }
        }
        var missingCA = ECVSdkConfiguration(name: "ca", serviceUrl: "https://127.0.0.1:1")
        missingCA.trustedCAFile = "/nonexistent/ca.pem"
        #expect(throws: ECVConfigurationError.self) { try ECVSdk(config: missingCA) }
    }

    /// A pin with a cleartext URL could protect nothing: an error at construction, never a silent
    /// cleartext connection (docs/protocol.md §0.2).
    @Test func pinsWithCleartextURLsAreConfigurationErrors() throws {
        let pin = "sha256/" + String(repeating: "A", count: 43) + "="
        var api = ECVSdkConfiguration(name: "pinned", serviceUrl: "http://127.0.0.1:1")
        api.pinnedCertificates = [pin]
        #expect(throws: ECVConfigurationError.cleartextURL("http://127.0.0.1:1")) { try ECVSdk(config: api) }
        var signaling = ECVSdkConfiguration(name: "pinned", serviceUrl: "https://127.0.0.1:1", signalingUrl: "ws://127.0.0.1:2")
        signaling.signalingPinnedCertificates = [pin]
        #expect(throws: ECVConfigurationError.cleartextURL("ws://127.0.0.1:2")) { try ECVSdk(config: signaling) }
        var bot = AgentBotConfiguration(serviceUrl: "http://127.0.0.1:1")
        bot.pinnedCertificates = [pin]
        #expect(throws: ECVConfigurationError.cleartextURL("http://127.0.0.1:1")) { try AgentBot(configuration: bot) }
        // Without pins or a CA file, cleartext stays allowed (a lab service on loopback).
        #expect(throws: Never.self) { try ECVSdk(config: ECVSdkConfiguration(name: "plain", serviceUrl: "http://127.0.0.1:1")) }
    }
}
