import GStreamer
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

    @Test("it nudges only while through and unheard, at most the maximum, and never again once the far end was heard")
    func schedule() {
        let nudge = ConnectivityNudge()
        #expect(nudge.next(connected: false, heardFarEnd: false) == .wait)
        #expect(nudge.next(connected: true, heardFarEnd: false) == .nudge)
        #expect(nudge.next(connected: true, heardFarEnd: true) == .finish)
        #expect(nudge.next(connected: true, heardFarEnd: false) == .finish)
        let bounded = ConnectivityNudge()
        let steps = (0..<(ConnectivityNudge.maximumNudges + 2)).map { _ in bounded.next(connected: true, heardFarEnd: false) }
        #expect(steps.filter { $0 == .nudge }.count == ConnectivityNudge.maximumNudges && steps.last == .finish)
        let stopped = ConnectivityNudge()
        stopped.stop()
        #expect(stopped.next(connected: true, heardFarEnd: false) == .finish)
    }
}
