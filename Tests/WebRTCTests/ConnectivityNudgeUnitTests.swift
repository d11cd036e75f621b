import GStreamer
import GLibCore
import Testing
@testable import WebRTC

/// The checks `ConnectivityNudge` sends, against RFC 5769's sample request, and when it sends
/// them. (`ConnectivityNudgeTests` measures what they do to a call whose far end is stuck.)
@Suite struct ConnectivityNudgeUnitTests {
    /// RFC 5769 §2.1: a Binding request with SOFTWARE, PRIORITY, ICE-CONTROLLED, USERNAME
    /// "evtj:h6vY" (padded with spaces), MESSAGE-INTEGRITY under "VOkJxbRl1RmTxUk/WvJxBt", FINGERPRINT.
    static let sample: [UInt8] = [
        0x00, 0x01, 0x00, 0x58, 0x21, 0x12, 0xA4, 0x42, 0xB7, 0xE7, 0xA7, 0x01, 0xBC, 0x34, 0xD6, 0x86, 0xFA, 0x87, 0xDF, 0xAE,
        0x80, 0x22, 0x00, 0x10, 0x53, 0x54, 0x55, 0x4E, 0x20, 0x74, 0x65, 0x73, 0x74, 0x20, 0x63, 0x6C, 0x69, 0x65, 0x6E, 0x74,
        0x00, 0x24, 0x00, 0x04, 0x6E, 0x00, 0x01, 0xFF,
        0x80, 0x29, 0x00, 0x08, 0x93, 0x2F, 0xF9, 0xB1, 0x51, 0x26, 0x3B, 0x36,
        0x00, 0x06, 0x00, 0x09, 0x65, 0x76, 0x74, 0x6A, 0x3A, 0x68, 0x36, 0x76, 0x59, 0x20, 0x20, 0x20,
        0x00, 0x08, 0x00, 0x14, 0x9A, 0xEA, 0xA7, 0x0C, 0xBF, 0xD8, 0xCB, 0x56, 0x78, 0x1E, 0xF2, 0xB5, 0xB2, 0xD3, 0xF2, 0x49,
        0xC1, 0xB5, 0x71, 0xA2,
        0x80, 0x28, 0x00, 0x04, 0xE5, 0x7A, 0x3B, 0xCF,
    ]
    static let password = "VOkJxbRl1RmTxUk/WvJxBt"
    static let integrityAt = 76, fingerprintAt = 100

    /// The integrity and fingerprint `message` should carry, computed as `STUNBindingRequest`
    /// does: over what precedes each, the length field already counting it.
    static func expectedTrailer(_ message: [UInt8], password: String) -> (integrity: [UInt8], fingerprint: UInt32) {
        let integrityAt = message.count - 32
        var prefix = Array(message[..<integrityAt])
        prefix[2] = 0
        prefix[3] = UInt8(integrityAt - 20 + 24)
        var upToFingerprint = Array(message[..<(message.count - 8)])
        upToFingerprint[3] = UInt8(message.count - 20)
        return (MessageAuthentication.hmacSHA1(key: Array(password.utf8), message: prefix), CRC32.checksum(upToFingerprint) ^ 0x5354_554E)
    }

    @Test("HMAC-SHA1 and CRC-32, with the length convention, give RFC 5769's sample its integrity and fingerprint")
    func primitivesMatchTheSample() {
        let trailer = Self.expectedTrailer(Self.sample, password: Self.password)
        #expect(trailer.integrity == Array(Self.sample[(Self.integrityAt + 4)..<(Self.integrityAt + 24)]))
        #expect(STUNBindingRequest.bigEndian(UInt64(trailer.fingerprint), bytes: 4) == Array(Self.sample[(Self.fingerprintAt + 4)...]))
    }

    @Test("the sample's attributes encode to the sample's bytes, but for the padding (zeros here, spaces there) and what covers it")
    func encodesTheSample() {
        let request = STUNBindingRequest(transactionID: Array(Self.sample[8..<20]), attributes: [
            (STUNBindingRequest.Attribute.software, Array("STUN test client".utf8)),
            (STUNBindingRequest.Attribute.priority, [0x6E, 0x00, 0x01, 0xFF]),
            (STUNBindingRequest.Attribute.iceControlled, [0x93, 0x2F, 0xF9, 0xB1, 0x51, 0x26, 0x3B, 0x36]),
            (STUNBindingRequest.Attribute.username, Array("evtj:h6vY".utf8)),
        ])
        let encoded = request.encoded(password: Self.password, hmacSHA1: MessageAuthentication.hmacSHA1)
        #expect(encoded.count == Self.sample.count)
        let padding = (Self.integrityAt - 3)..<Self.integrityAt
        #expect(Array(encoded[..<padding.lowerBound]) == Array(Self.sample[..<padding.lowerBound]))
        #expect(Array(encoded[padding]) == [0, 0, 0])
        let integrityHeader = Self.integrityAt..<(Self.integrityAt + 4), fingerprintHeader = Self.fingerprintAt..<(Self.fingerprintAt + 4)
        #expect(Array(encoded[integrityHeader]) == Array(Self.sample[integrityHeader]))
        #expect(Array(encoded[fingerprintHeader]) == Array(Self.sample[fingerprintHeader]))
        let trailer = Self.expectedTrailer(encoded, password: Self.password)
        #expect(Array(encoded[integrityHeader.upperBound..<Self.fingerprintAt]) == trailer.integrity)
        #expect(Array(encoded[fingerprintHeader.upperBound...]) == STUNBindingRequest.bigEndian(UInt64(trailer.fingerprint), bytes: 4))
    }

    @Test("an ICE check names the far end's ufrag first, and carries this side's role and a peer-reflexive priority")
    func iceCheck() {
        let controlling = STUNBindingRequest.iceCheck(transactionID: Array(repeating: 7, count: 12), localUfrag: "ours", remoteUfrag: "theirs",
                                                      controlling: true, tieBreaker: 0x0102_0304_0506_0708)
        #expect(controlling.attributes.map(\.type) == [0x0006, 0x0024, 0x802A])
        #expect(controlling.attributes[0].value == Array("theirs:ours".utf8))
        #expect(controlling.attributes[1].value == [0x6E, 0xFF, 0xFF, 0xFF])
        #expect(controlling.attributes[2].value == [1, 2, 3, 4, 5, 6, 7, 8])
        let controlled = STUNBindingRequest.iceCheck(transactionID: Array(repeating: 7, count: 12), localUfrag: "a", remoteUfrag: "b",
                                                     controlling: false, tieBreaker: 1)
        #expect(controlled.attributes[2].type == 0x8029)
    }

    @Test("credentials come from both SDPs: the far end's password, both ufrags; an SDP without them, or with them out of bounds, gives none")
    func credentials() {
        let local = "v=0\r\na=ice-ufrag:LOCAL\r\na=ice-pwd:localsecretlocalsecret12\r\n"
        let remote = "v=0\r\nm=audio 9 UDP/TLS/RTP/SAVPF 111\r\na=ice-ufrag:REMOTE\r\na=ice-pwd:remotesecretremotesecret\r\n"
        let credentials = ConnectivityNudge.Credentials(localSDP: local, remoteSDP: remote, controlling: true)
        #expect(credentials?.localUfrag == "LOCAL" && credentials?.remoteUfrag == "REMOTE" && credentials?.remotePassword == "remotesecretremotesecret")
        #expect(ConnectivityNudge.Credentials(localSDP: local, remoteSDP: "v=0\r\na=ice-ufrag:REMOTE\r\n", controlling: true) == nil)
        let oversized = "v=0\r\na=ice-ufrag:\(String(repeating: "u", count: 70_000))\r\na=ice-pwd:remotesecretremotesecret\r\n"
        #expect(ConnectivityNudge.Credentials(localSDP: local, remoteSDP: oversized, controlling: true) == nil)
        #expect(ConnectivityNudge.Credentials(localSDP: local, remoteSDP: "v=0\r\na=ice-ufrag:REMOTE\r\na=ice-pwd:short\r\n",
                                              controlling: true) == nil)
    }

    @Test("it nudges through the selected pair only while through and unheard, at most the maximum, and never again once the far end was heard")
    func schedule() {
        let nudge = ConnectivityNudge()
        #expect(nudge.next(sendable: false, heardFarEnd: false, described: false) == .wait)
        #expect(nudge.next(sendable: false, heardFarEnd: false, described: true) == .wait)
        #expect(nudge.next(sendable: true, heardFarEnd: false, described: true) == .nudge)
        #expect(nudge.next(sendable: true, heardFarEnd: true, described: true) == .finish)
        #expect(nudge.next(sendable: true, heardFarEnd: false, described: true) == .finish)
        let bounded = ConnectivityNudge()
        let steps = (0..<(ConnectivityNudge.maximumNudges + 2)).map { _ in
            bounded.next(sendable: true, heardFarEnd: false, described: true)
        }
        #expect(steps.filter { $0 == .nudge }.count == ConnectivityNudge.maximumNudges && steps.last == .finish)
        let stopped = ConnectivityNudge()
        stopped.stop()
        #expect(stopped.next(sendable: true, heardFarEnd: false, described: true) == .finish)
    }

    @Test("before ICE is through, or before the transport can send, it nudges through the candidates' sockets from the third turn with both descriptions there, at most the maximum")
    func scheduleBeforeThrough() {
        let nudge = ConnectivityNudge()
        // Without both descriptions no turn counts.
        for _ in 0..<5 { #expect(nudge.next(sendable: false, heardFarEnd: false, described: false) == .wait) }
        let turns = (0..<(ConnectivityNudge.maximumNudges + 5)).map { _ in
            nudge.next(sendable: false, heardFarEnd: false, described: true)
        }
        #expect(Array(turns.prefix(ConnectivityNudge.turnsBeforeEarlyNudges - 1)) == Array(repeating: .wait, count: ConnectivityNudge.turnsBeforeEarlyNudges - 1))
        #expect(turns[ConnectivityNudge.turnsBeforeEarlyNudges - 1] == .nudgeThroughSockets)
        #expect(turns.filter { $0 == .nudgeThroughSockets }.count == ConnectivityNudge.maximumNudges && turns.last == .wait)
        // Through afterwards: the other phase has its own allowance.
        #expect(nudge.next(sendable: true, heardFarEnd: false, described: true) == .nudge)
        // Through with the transport not yet sendable (a DTLS server before the client's first flight): the sockets.
        let server = ConnectivityNudge()
        let serverTurns = (0..<ConnectivityNudge.turnsBeforeEarlyNudges).map { _ in
            server.next(sendable: false, heardFarEnd: false, described: true)
        }
        #expect(serverTurns.last == .nudgeThroughSockets && serverTurns.dropLast().allSatisfy { $0 == .wait })
        #expect(nudge.next(sendable: false, heardFarEnd: true, described: true) == .finish)
    }

    @Test("candidates: UDP ones of the RTP component with a numeric address, with or without 'a='; TCP, RTCP, mDNS names and junk give none")
    func candidates() throws {
        let host = try #require(SDPInspection.udpCandidate("candidate:1 1 UDP 2015363327 10.213.5.2 47305 typ host"))
        #expect(host == SDPInspection.UDPCandidate(type: "host", priority: 2015363327, address: "10.213.5.2", port: 47305))
        let v6 = try #require(SDPInspection.udpCandidate("a=candidate:2 1 udp 1 2001:db8::7 9 typ srflx raddr 0.0.0.0 rport 0"))
        #expect(v6 == SDPInspection.UDPCandidate(type: "srflx", priority: 1, address: "2001:db8::7", port: 9))
        for junk in ["candidate:1 1 TCP 1 10.0.0.1 9 typ host tcptype active", "candidate:1 2 UDP 1 10.0.0.1 9 typ host",
                     "candidate:1 1 UDP 1 4f2c-77.local 9 typ host", "candidate:1 1 UDP 1 10.0.0.1 0 typ host",
                     "candidate:1 1 UDP 1 10.0.0.1 70000 typ host", "candidate:1 1 UDP 4294967296 10.0.0.1 9 typ host",
                     "candidate:1 1 UDP 2147483648 10.0.0.1 9 typ host", "candidate:1 1 UDP 0 10.0.0.1 9 typ host",
                     "candidate:1 1 UDP", "", "a=ice-ufrag:x",
                     "candidate:1 1 UDP 1 10.0.0.1 9 typ host " + String(repeating: "x", count: 2_000)] {
            #expect(SDPInspection.udpCandidate(junk) == nil, "\(junk.prefix(60))")
        }
        let sdp = "v=0\r\nm=audio 9 UDP/TLS/RTP/SAVPF 111\r\na=candidate:1 1 UDP 5 10.0.0.1 4000 typ host\r\n"
            + "a=candidate:2 1 UDP 5 10.0.0.2 4001 typ relay raddr 10.0.0.1 rport 4000\r\n"
        #expect(SDPInspection.udpCandidates(sdp).map(\.port) == [4000, 4001])
        var book = CandidateBook()
        for (index, candidate) in SDPInspection.udpCandidates(sdp).enumerated() {
            book.addLocal(candidate)
            book.addRemote(candidate)
            #expect(book.localHosts.count == 1 && book.remotes.count == 1, "after \(index + 1): a relayed candidate is neither")
        }
        // Hex digits and dots, but no address: nothing to send to.
        book.addRemote(SDPInspection.UDPCandidate(type: "host", priority: 9, address: "abc.def", port: 9))
        #expect(book.remotes.count == 1)
        for port in 1...40 { book.addRemote(SDPInspection.UDPCandidate(type: "host", priority: 7, address: "10.9.9.9", port: UInt16(port))) }
        #expect(book.remotes.count == CandidateBook.maximumRemote)
    }

    @Test("the pairs go in libnice's order, highest pair priority first, each local candidate with the far end's of its family")
    func pairOrder() throws {
        var book = CandidateBook()
        func candidate(_ priority: UInt32, _ address: String) -> SDPInspection.UDPCandidate {
            SDPInspection.UDPCandidate(type: "host", priority: priority, address: address, port: 9)
        }
        book.addLocal(candidate(100, "10.0.0.1"))
        book.addLocal(candidate(300, "fe80::1"))
        book.addRemote(candidate(200, "10.0.0.2"))
        book.addRemote(candidate(50, "10.0.0.3"))
        book.addRemote(candidate(400, "fe80::2"))
        let pairs = book.pairs().map { "\($0.local.host)>\($0.remote.host)" }
        #expect(pairs == ["fe80::1>fe80::2", "10.0.0.1>10.0.0.2", "10.0.0.1>10.0.0.3"])
        #expect(CandidateBook.pairPriority(1, 2) == CandidateBook.pairPriority(2, 1) - 1)
        let highest = UInt64(SDPInspection.candidatePriorities.upperBound)
        #expect(CandidateBook.pairPriority(.max, .max) == highest << 32 + 2 * highest, "held to the RFC's bound, no overflow")
    }
}
