import Foundation
import MediaTestSupport
import Testing
@testable import WebRTC

/// Which candidate addresses count as link-local (`SDPInspection.isLinkLocalCandidate`).
struct LinkLocalCandidateTests {
    @Test(arguments: [
        ("candidate:1 1 UDP 2015363327 fe80::68f5:7ff:fe90:29a5 59776 typ host", true),
        ("a=candidate:1 1 UDP 2015363327 FE80::1 4000 typ host", true),
        ("candidate:1 1 udp 2015363327 febf::1 4000 typ host", true),
        ("candidate:3 1 TCP 1015021823 169.254.10.20 9 typ host tcptype active", true),
        ("candidate:1 1 UDP 2015363327 fec0::1 4000 typ host", false),
        ("candidate:1 1 UDP 2015363327 fd00::2 4000 typ host", false),
        ("candidate:1 1 UDP 2015363327 192.0.2.2 4000 typ host", false),
        ("candidate:1 1 UDP 2015363327 fe8::1 4000 typ host", false),
        ("candidate:1 1 UDP 2015363327 2d0b8e1c-7f5e-4a43-9c1f-1a2b3c4d5e6f.local 4000 typ host", false),
        ("candidate:1 1 UDP", false),
        ("", false),
    ])
    func linkLocalAddresses(line: String, linkLocal: Bool) {
        #expect(SDPInspection.isLinkLocalCandidate(line) == linkLocal, "\(line)")
    }

    /// A far end's description loses the link-local candidates written into it, and nothing else.
    @Test func aRemoteDescriptionsLinkLocalCandidatesAreLeftOut() {
        let sdp = ["v=0", "m=audio 9 UDP/TLS/RTP/SAVPF 111", "a=mid:0",
                   "a=candidate:1 1 UDP 2015363327 fe80::68f5:7ff:fe90:29a5 59776 typ host",
                   "a=candidate:2 1 UDP 2015363327 192.0.2.2 4000 typ host",
                   "a=candidate:3 1 UDP 2015363327 169.254.1.1 4001 typ host",
                   "a=end-of-candidates"].joined(separator: "\r\n") + "\r\n"
        let applied = SDPRewrite.removingLinkLocalCandidates(sdp)
        #expect(applied == ["v=0", "m=audio 9 UDP/TLS/RTP/SAVPF 111", "a=mid:0",
                            "a=candidate:2 1 UDP 2015363327 192.0.2.2 4000 typ host",
                            "a=end-of-candidates"].joined(separator: "\r\n") + "\r\n")
        #expect(SDPRewrite.removingLinkLocalCandidates(applied) == applied)
    }
}

/// Two peers on one host connect over a host candidate of some local address (libnice skips
/// 127.0.0.1). Over a link-local one, the call belonged to whichever interface had it (a
/// container's or a network lab's veth end), and when that interface went the call lost its path
/// both ways while ICE stayed connected: the lip-sync benchmark's short recordings, while other
/// processes' network labs came and went. Link-local candidates are neither offered nor taken.
@Suite(.serialized, .enabled(if: getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/sbin/ip"), "needs root and /usr/sbin/ip"))
struct LinkLocalPathTests {
    @Test func anInterfaceThatGoesTakesNoCallWithIt() async throws {
        // A veth pair with link-local addresses only, up before the call gathers its candidates
        // (the kernel here has no dummy interfaces); deleting one end deletes both.
        let interface = "ecvll\(getpid() % 100_000)a"
        try Self.ip("link", "add", interface, "type", "veth", "peer", "name", String(interface.dropLast()) + "b")
        var present = true
        defer { if present { _ = try? Self.ip("link", "del", interface) } }
        try Self.ip("link", "set", interface, "up")
        try Self.ip("link", "set", String(interface.dropLast()) + "b", "up")
        try await eventually(.seconds(10), "a usable link-local address on \(interface)") {
            guard let listing = try? Self.ip("-6", "addr", "show", "dev", interface) else { return false }
            return listing.contains("fe80::") && !listing.contains("tentative")
        }

        let pair = PeerPair(offerer: testMedia(), answerer: testMedia())
        let atAnswerer = RemoteMedia(pair.answerer)
        do {
            try await pair.start()
            try await waitFor(.connected, on: pair.answerer)
            try await eventually(.seconds(10), "frames at the answerer") { atAnswerer.video.count > 30 }
            let local = try #require(try await pair.answerer.stats().candidatePair?.localAddress, "the selected pair")
            #expect(!SDPInspection.isLinkLocalCandidate("candidate:1 1 UDP 1 \(local) 9 typ host"), "the call runs over \(local)")

            try Self.ip("link", "del", interface)
            present = false
            let before = atAnswerer.video.count
            try await eventually(.seconds(10), "frames after \(interface) went") { atAnswerer.video.count > before + 30 }
        } catch {
            await pair.close()
            throw error
        }
        await pair.close()
    }

    /// Runs `/usr/sbin/ip` and returns its output (see `runTool`).
    @discardableResult
    static func ip(_ arguments: String...) throws -> String { try runTool("/usr/sbin/ip", arguments) }
}
