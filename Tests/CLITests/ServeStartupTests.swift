import Foundation
import Testing

/// `ecv serve` fails fast: a start-up error is printed at once as one line and the process exits 1,
/// instead of looking healthy until it is signalled (a supervisor such as systemd would otherwise
/// never learn the service did not start). Each run is bounded by a deadline; a serve that keeps
/// running past it fails the test and is killed.
@Suite struct ServeStartupTests {
    /// The issue asks for 2 s; it takes about 50 ms. The margin is for a loaded 2-core CI machine.
    static let deadline: Duration = .seconds(5)

    /// Runs `ecv serve --open-agents arguments…` and checks it exited 1 by itself (not signalled: a
    /// signalled serve also prints its error and exits 1) with one error line naming `expected`.
    static func expectFailsFast(_ arguments: [String], naming expected: String, status expectedStatus: Int32 = 1) async throws {
        let serve = try RunningECV(["serve", "--open-agents"] + arguments)
        defer { serve.stop() }
        let status = try await serve.exitStatus(within: deadline)
        #expect(status == expectedStatus, "exit status \(status), stderr: \(serve.stderr)")
        // The exit status is in; the output's last bytes may still be on their way through the pipe.
        try await eventually(.seconds(5), "the error line") { serve.stderr.hasSuffix("\n") }
        let lines = serve.stderr.split(separator: "\n").filter { !$0.trimmingCharacters(in: .whitespaces).isEmpty }
        #expect(lines.count == 1, "one clear line: \(serve.stderr)")
        #expect(lines.first?.hasPrefix("ecv serve:") == true && serve.stderr.contains(expected), "\(serve.stderr)")
        #expect(!serve.stdout.contains("serviceUrl"), "no banner for a service that is not running: \(serve.stdout)")
    }

    @Test func aPortInUseExitsOneAtOnce() async throws {
        let (service, base) = try await startLoopbackService()
        let port = try #require(URL(string: base)?.port)
        try await Self.expectFailsFast(["--port", String(port)], naming: String(port))
        await service.stop()
    }

    @Test func anAddressThisHostLacksExitsOneAtOnce() async throws {
        // 192.0.2.0/24 is TEST-NET-1 (RFC 5737): never assigned to a real interface.
        try await Self.expectFailsFast(["--host", "192.0.2.1", "--port", "0"], naming: "192.0.2.1")
    }

    @Test func anEmptyQueueNameExitsOneAtOnce() async throws {
        try await Self.expectFailsFast(["--port", "0", "--queue", ""], naming: "--queue")
    }

    /// A configuration the service would refuse is bad usage, named by its flag, before anything listens.
    @Test func aTrustedProxyThatIsNotAnAddressIsBadUsage() async throws {
        try await Self.expectFailsFast(["--port", "0", "--trusted-proxy", "proxy.example.com"], naming: "--trusted-proxy", status: 2)
        try await Self.expectFailsFast(["--port", "0", "--advertised-url", "ecv.example.com"], naming: "--advertised-url", status: 2)
    }
}
