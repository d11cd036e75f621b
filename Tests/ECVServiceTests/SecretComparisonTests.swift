@testable import ECVService
import Testing

/// Secrets (back-office API keys, caller tokens, agent secrets) are compared in constant time,
/// lengths at full width.
struct SecretComparisonTests {
    @Test func lengthsThatDifferBy256DoNotMatch() {
        let secret = "k3y"
        let padded = secret + String(repeating: "\0", count: 256)
        #expect(!constantTimeEquals(secret, padded))
        #expect(!constantTimeEquals(padded, secret))
        #expect(!constantTimeContains(["other", secret], padded))
        #expect(constantTimeEquals(secret, "k3y") && constantTimeContains(["other", secret], "k3y"))
        #expect(!constantTimeEquals(secret, "k3x") && !constantTimeEquals("", secret))
    }
}
