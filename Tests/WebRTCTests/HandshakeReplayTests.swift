import Testing
@testable import WebRTC

/// The handshake replay's bookkeeping on datagrams as the transport carries them: which flight
/// is ours, when the far end answered, when it is over. (`HeavyLossSetUpTests` measures what it
/// does to calls across a lossy path.)
@Suite struct HandshakeReplayTests {
    /// A DTLS record: type, version 1.2, epoch, 6-byte sequence number, length, body.
    static func record(_ type: UInt8, epoch: UInt16 = 0, sequence: UInt8, body: [UInt8]) -> [UInt8] {
        [type, 0xFE, 0xFD, UInt8(epoch >> 8), UInt8(epoch & 0xFF), 0, 0, 0, 0, 0, sequence, 0, UInt8(body.count)] + body
    }

    static let start = ContinuousClock.now
    static func at(_ milliseconds: Int) -> ContinuousClock.Instant { start + .milliseconds(milliseconds) }

    func sent(_ replay: HandshakeReplay, _ bytes: [UInt8], at milliseconds: Int) -> Bool {
        bytes.withUnsafeBytes { replay.sent($0, at: Self.at(milliseconds)) }
    }

    func received(_ replay: HandshakeReplay, _ bytes: [UInt8]) -> Bool { bytes.withUnsafeBytes { replay.received($0) } }

    @Test func datagramsAreToldApartByTheirFirstByte() {
        func kind(_ bytes: [UInt8]) -> HandshakeReplay.Datagram { bytes.withUnsafeBytes { HandshakeReplay.Datagram($0) } }
        #expect(kind(Self.record(22, sequence: 1, body: [1, 2, 3])) == .handshake(key: [22, 0, 0, 0, 3, 1, 2, 3]))
        #expect(kind(Self.record(22, sequence: 9, body: [1, 2, 3])) == kind(Self.record(22, sequence: 1, body: [1, 2, 3])),
                "a resend with a new record number is the same message")
        #expect(kind(Self.record(20, epoch: 0, sequence: 2, body: [1])) != kind(Self.record(20, epoch: 1, sequence: 2, body: [1])))
        #expect(kind(Self.record(23, epoch: 1, sequence: 3, body: [7])) == .applicationData)
        #expect(kind([0x80, 96, 0, 1]) == .media)
        #expect(kind([0x00, 0x01, 0x00, 0x50]) == .other, "STUN")
        #expect(kind([22, 0xFE]) == .other, "too short for a record")
        #expect(kind([]) == .other)
    }

    @Test func aFlightIsSentAgainUntilTheFarEndAnswersSomethingNew() {
        let replay = HandshakeReplay()
        let hello = Self.record(22, sequence: 0, body: [1, 0xAA])
        #expect(sent(replay, hello, at: 0))
        #expect(replay.due(at: Self.at(100)) == [], "not yet: the interval has not passed")
        #expect(replay.due(at: Self.at(150)) == [hello])
        #expect(replay.due(at: Self.at(200)) == [], "the interval counts from the replay")
        // OpenSSL's own resend (new record number, same message) neither joins nor restarts the flight.
        #expect(sent(replay, Self.record(22, sequence: 1, body: [1, 0xAA]), at: 250))
        #expect(replay.due(at: Self.at(300)) == [hello])

        // The far end's flight: something new, so ours is not sent again.
        let serverHello = Self.record(22, sequence: 0, body: [2, 0xBB])
        #expect(received(replay, serverHello))
        #expect(replay.due(at: Self.at(1_000)) == [])

        // Our next flight replaces the first, datagram by datagram; the far end resending its
        // old flight (OpenSSL's timer) is no answer to it.
        let certificate = Self.record(22, sequence: 1, body: [11, 1]), finished = Self.record(22, epoch: 1, sequence: 0, body: [9, 9])
        #expect(sent(replay, certificate, at: 1_000) && sent(replay, Self.record(20, sequence: 2, body: [1]), at: 1_000)
                && sent(replay, finished, at: 1_000))
        #expect(received(replay, Self.record(22, sequence: 5, body: [2, 0xBB])))
        #expect(replay.due(at: Self.at(1_150)) == [certificate, Self.record(20, sequence: 2, body: [1]), finished])
    }

    @Test func theFarEndsMediaOrDataEndsIt() {
        let replay = HandshakeReplay()
        #expect(sent(replay, Self.record(22, sequence: 0, body: [1]), at: 0))
        #expect(!received(replay, [0x80, 96, 0, 1]), "the far end's media: its DTLS is done, the probe goes")
        #expect(replay.due(at: Self.at(1_000)) == nil)
        #expect(!sent(replay, Self.record(22, sequence: 1, body: [2]), at: 1_000), "our probe goes at our next datagram")

        let other = HandshakeReplay()
        #expect(sent(other, Self.record(22, sequence: 0, body: [1]), at: 0))
        #expect(!received(other, Self.record(23, epoch: 1, sequence: 0, body: [5])), "the far end's data")
        #expect(other.due(at: Self.at(1_000)) == nil)
    }

    /// The server is done once it has the client's Finished and sends media at once; when its own
    /// last flight (change cipher spec, Finished) is lost, the client never finishes unless the
    /// server sends that flight again.
    @Test func ourOwnMediaDoesNotEndIt() {
        let server = HandshakeReplay()
        let changeCipherSpec = Self.record(20, sequence: 4, body: [1]), finished = Self.record(22, epoch: 1, sequence: 0, body: [20, 1])
        #expect(sent(server, changeCipherSpec, at: 0) && sent(server, finished, at: 0))
        #expect(sent(server, [0x80, 96, 0, 1], at: 10) && sent(server, Self.record(23, epoch: 1, sequence: 1, body: [5]), at: 20),
                "our own media and data: the probe stays")
        #expect(server.due(at: Self.at(150)) == [changeCipherSpec, finished], "nothing new from the client: the flight goes again")
    }

    @Test func aFarEndSendingEndlessDistinctMessagesEndsTheReplay() {
        let replay = HandshakeReplay()
        #expect(sent(replay, Self.record(22, sequence: 0, body: [1]), at: 0))
        for index in 0..<HandshakeReplay.maximumFarEndMessages {
            #expect(received(replay, Self.record(22, sequence: 0, body: [2, UInt8(index)])))
        }
        _ = received(replay, Self.record(22, sequence: 0, body: [3]))
        #expect(replay.due(at: Self.at(1_000)) == nil, "what it keeps of the far end is bounded")
    }

    @Test func aFlightNobodyAnswersIsLeftToOpenSSLAfterItsLastReplay() {
        let replay = HandshakeReplay()
        #expect(sent(replay, Self.record(22, sequence: 0, body: [1]), at: 0))
        var time = 0, replays = 0
        while let flight = replay.due(at: Self.at(time)) {
            if !flight.isEmpty { replays += 1 }
            time += 50
            if time > 60_000 { break }
        }
        #expect(replays == HandshakeReplay.maximumReplays)
    }
}
