import ECVProtocol
import ECVService
import Soup
import Testing

/// A plain-HTTP service behind a TLS-terminating proxy hands out `https://`/`wss://` URLs when the
/// proxy (a configured address) says `X-Forwarded-Proto: https`, so clients never get sent to
/// `ws://`; the header from anyone else changes nothing.
extension ServiceTests {
@Suite("X-Forwarded-Proto from trusted proxies") struct ForwardedProtoTests {
    private func joinURLs(trusting proxies: [String], forwarded: String?) async throws -> (wss: String, post: String) {
        let test = try await TestService.start { $0.trustedProxies = proxies }
        do {
            let call = try await test.dial()
            var headers = TestService.credentialHeaders(test.callerToken(call))
            if let forwarded { headers["X-Forwarded-Proto"] = forwarded }
            let response = try await test.post(ECVAPI.joinPath(room: call), headers: headers)
            let params = try #require(try test.decode(JoinResponse.self, response).params)
            await test.stop()
            return (params.wssUrl, params.wssPostUrl)
        } catch {
            await test.stop()
            throw error
        }
    }

    @Test func aTrustedProxysForwardedHTTPSMakesTheURLsSecure() async throws {
        let behindProxy = try await joinURLs(trusting: ["127.0.0.1"], forwarded: "https")
        #expect(behindProxy.wss.hasPrefix("wss://127.0.0.1:"), "\(behindProxy)")
        #expect(behindProxy.post.hasPrefix("https://127.0.0.1:"), "\(behindProxy)")
    }

    @Test func theHeaderFromAnUntrustedAddressOrWithoutItChangesNothing() async throws {
        let untrusted = try await joinURLs(trusting: ["192.0.2.7"], forwarded: "https")
        #expect(untrusted.wss.hasPrefix("ws://127.0.0.1:"), "\(untrusted)")
        let trustedButPlain = try await joinURLs(trusting: ["127.0.0.1"], forwarded: nil)
        #expect(trustedButPlain.wss.hasPrefix("ws://127.0.0.1:"), "\(trustedButPlain)")
    }

    @Test func aTrustedProxyMustBeANumericAddress() throws {
        var configuration = ReferenceServiceConfiguration()
        configuration.trustedProxies = ["proxy.example.com"]
        #expect(configuration.problem()?.contains("not a numeric") == true)
        configuration.trustedProxies = ["10.0.0.1", "::1"]
        #expect(configuration.problem() == nil)
    }
}
}
