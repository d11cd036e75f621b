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

    /// An epoch 0 handshake message (or a fragment of one): type, length, message sequence,
    /// fragment offset and length, then the fragment.
    static func message(_ type: UInt8, sequence: UInt8, offset: UInt8 = 0, _ fragment: [UInt8], total: UInt8? = nil) -> [UInt8] {
        [type, 0, 0, total ?? UInt8(fragment.count), 0, sequence, 0, 0, offset, 0, 0, UInt8(fragment.count)] + fragment
    }

    /// One handshake record holding `messages`.
    static func handshake(record: UInt8, _ messages: [UInt8]...) -> [UInt8] { Self.record(22, sequence: record, body: messages.flatMap { $0 }) }

    static let start = ContinuousClock.now
    static func at(_ milliseconds: Int) -> ContinuousClock.Instant { start + .milliseconds(milliseconds) }

    func sent(_ replay: HandshakeReplay, _ bytes: [UInt8], at milliseconds: Int) -> Bool {
        bytes.withUnsafeBytes { replay.sent($0, at: Self.at(milliseconds)) }
    }

    func received(_ replay: HandshakeReplay, _ bytes: [UInt8]) -> Bool { bytes.withUnsafeBytes { replay.received($0) } }

    static func kind(_ bytes: [UInt8]) -> DTLSDatagram { bytes.withUnsafeBytes { DTLSDatagram($0) } }

    @Test func datagramsAreToldApartByTheirFirstByteAndTheirRecords() {
        typealias Progress = DTLSHandshakeProgress
        let hello = Self.handshake(record: 1, Self.message(1, sequence: 0, [1, 2, 3]))
        #expect(Self.kind(hello) == .handshake(Progress(epoch: 0, position: 3)), "message 0, fragment ending at 3")
        #expect(Self.kind(Self.handshake(record: 9, Self.message(1, sequence: 0, [1, 2, 3]))) == Self.kind(hello),
                "a resend with a new record number is the same progress")
        #expect(Self.kind(Self.handshake(record: 2, Self.message(11, sequence: 2, [7]), Self.message(16, sequence: 3, [8, 8])))
                == .handshake(Progress(epoch: 0, position: 3 << 24 | 2)), "two messages in one record: the later counts")
        #expect(Self.kind(Self.handshake(record: 2, Self.message(11, sequence: 2, offset: 100, [7], total: 200)))
                == .handshake(Progress(epoch: 0, position: 2 << 24 | 101)), "a fragment counts up to its end")
        let changeCipherSpec = Self.record(20, sequence: 4, body: [1]), finished = Self.record(22, epoch: 1, sequence: 0, body: [9, 9])
        #expect(Self.kind(changeCipherSpec) == .handshake(Progress(epoch: 0, position: .max)))
        #expect(Self.kind(changeCipherSpec + finished) == .handshake(Progress(epoch: 1, position: 0)), "two records in one datagram")
        #expect(Self.kind(Self.record(23, epoch: 1, sequence: 3, body: [7])) == .applicationData)
        #expect(Self.kind(Self.record(21, epoch: 1, sequence: 3, body: [7, 7])) == .other, "an alert")
        #expect(Self.kind([0x80, 96, 0, 1]) == .media)
        #expect(Self.kind([0x00, 0x01, 0x00, 0x50]) == .other, "STUN")
        #expect(Self.kind([22, 0xFE]) == .other, "too short for a record")
        #expect(Self.kind(Array(hello.dropLast())) == .other, "a record longer than the datagram")
        #expect(Self.kind(Self.record(22, sequence: 1, body: [1, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0, 9, 1])) == .other,
                "a message longer than its record")
        #expect(Self.kind(hello + [22, 0xFE]) == Self.kind(hello), "a truncated second record leaves the first")
        #expect(Self.kind([]) == .other)
    }

    @Test func aFlightIsSentAgainUntilTheFarEndAnswersSomethingNew() {
        let replay = HandshakeReplay()
        let hello = Self.handshake(record: 0, Self.message(1, sequence: 0, [0xAA]))
        #expect(sent(replay, hello, at: 0))
        #expect(replay.due(at: Self.at(100)) == [], "not yet: the interval has not passed")
        #expect(replay.due(at: Self.at(150)) == [hello])
        #expect(replay.due(at: Self.at(200)) == [], "the interval counts from the replay")
        // OpenSSL's own resend (new record number, same message) neither joins nor restarts the flight.
        #expect(sent(replay, Self.handshake(record: 1, Self.message(1, sequence: 0, [0xAA])), at: 250))
        #expect(replay.due(at: Self.at(300)) == [hello])

        // The far end's flight: something new, so ours is not sent again.
        let serverHello = Self.handshake(record: 0, Self.message(2, sequence: 1, [0xBB]), Self.message(14, sequence: 2, []))
        #expect(received(replay, serverHello))
        #expect(replay.due(at: Self.at(1_000)) == [])

        // Our next flight replaces the first, datagram by datagram; the far end resending its
        // old flight (OpenSSL's timer) is no answer to it.
        let certificate = Self.handshake(record: 1, Self.message(11, sequence: 1, [1]))
        let changeCipherSpec = Self.record(20, sequence: 2, body: [1]), finished = Self.record(22, epoch: 1, sequence: 0, body: [9, 9])
        #expect(sent(replay, certificate, at: 1_000) && sent(replay, changeCipherSpec, at: 1_000) && sent(replay, finished, at: 1_000))
        #expect(received(replay, Self.handshake(record: 5, Self.message(2, sequence: 1, [0xBB]), Self.message(14, sequence: 2, []))))
        #expect(replay.due(at: Self.at(1_150)) == [certificate, Self.record(20, sequence: 3, body: [1]), finished],
                "byte for byte, but the change cipher spec's record number (see below)")
    }

    /// A change cipher spec the far end got before the messages ahead of it is dropped there,
    /// and its record number with it: each replay gives it one not used before, above OpenSSL's
    /// own, and touches nothing else.
    @Test func aReplayedChangeCipherSpecHasANewRecordNumberEachTime() {
        let server = HandshakeReplay()
        let ticket = Self.handshake(record: 6, Self.message(4, sequence: 5, [1, 2, 3]))
        let finishing = Self.record(20, sequence: 7, body: [1]) + Self.record(22, epoch: 1, sequence: 0, body: [9, 9])
        #expect(sent(server, ticket, at: 0) && sent(server, finishing, at: 0))
        #expect(server.due(at: Self.at(150)) == [ticket, Self.record(20, sequence: 8, body: [1]) + Self.record(22, epoch: 1, sequence: 0, body: [9, 9])])
        // OpenSSL's own resend, one record to a datagram, numbered on from its last.
        #expect(sent(server, Self.handshake(record: 9, Self.message(4, sequence: 5, [1, 2, 3])), at: 200))
        #expect(sent(server, Self.record(20, sequence: 10, body: [1]), at: 200))
        #expect(server.due(at: Self.at(350)) == [ticket, Self.record(20, sequence: 11, body: [1]) + Self.record(22, epoch: 1, sequence: 0, body: [9, 9])])
        #expect(server.due(at: Self.at(500))?.last?[10] == 12, "and the next replay the next number")
    }

    @Test func onlyAnEpochZeroChangeCipherSpecIsRenumbered() {
        var next: UInt64 = 0x01_0203_0405
        let datagram = Self.handshake(record: 1, Self.message(11, sequence: 1, [1])) + Self.record(20, sequence: 2, body: [1])
            + Self.record(20, epoch: 1, sequence: 3, body: [1]) + Self.record(22, epoch: 1, sequence: 4, body: [5])
        let renumbered = HandshakeReplay.renumberingChangeCipherSpec(datagram, from: &next)
        let records = renumbered.withUnsafeBytes { DTLSRecord.all(in: $0) }
        #expect(records.map(\.sequence) == [1, 0x01_0203_0405, 3, 4])
        #expect(next == 0x01_0203_0406)
        #expect(renumbered.count == datagram.count && records.map(\.type) == [22, 20, 20, 22])
        #expect(HandshakeReplay.renumberingChangeCipherSpec([22, 0xFE], from: &next) == [22, 0xFE], "not a record: as it was")
    }

    /// OpenSSL sends a flight's messages packed several to a datagram and resends them one to a
    /// datagram: the far end resending its old flight that way is still no answer, and our own
    /// resend that way neither restarts nor joins our flight.
    @Test func aResendPackedOtherwiseIsNoAnswer() {
        let client = HandshakeReplay()
        let packed = Self.handshake(record: 1, Self.message(11, sequence: 1, [1]), Self.message(16, sequence: 2, [2]))
        func finishing(_ number: UInt8) -> [UInt8] { Self.record(20, sequence: number, body: [1]) + Self.record(22, epoch: 1, sequence: 0, body: [9, 9]) }
        #expect(received(client, Self.handshake(record: 0, Self.message(2, sequence: 0, [5]), Self.message(14, sequence: 1, []))))
        #expect(sent(client, packed, at: 0) && sent(client, finishing(2), at: 0))
        // The server's first flight again, one message to a datagram (its timer fired).
        #expect(received(client, Self.handshake(record: 7, Self.message(2, sequence: 0, [5]))))
        #expect(received(client, Self.handshake(record: 8, Self.message(14, sequence: 1, []))))
        #expect(client.due(at: Self.at(150)) == [packed, finishing(3)], "still unanswered: the flight goes again")
        // Our own timer's resend, unpacked.
        #expect(sent(client, Self.handshake(record: 3, Self.message(11, sequence: 1, [1])), at: 200))
        #expect(sent(client, Self.record(20, sequence: 5, body: [1]), at: 200))
        #expect(client.due(at: Self.at(300)) == [packed, finishing(6)])
        // The server's change cipher spec and Finished: new, and the replay rests.
        #expect(received(client, Self.record(20, sequence: 9, body: [1])))
        #expect(client.due(at: Self.at(1_000)) == [])
    }

    @Test func theFarEndsMediaOrDataEndsIt() {
        let replay = HandshakeReplay()
        #expect(sent(replay, Self.handshake(record: 0, Self.message(1, sequence: 0, [1])), at: 0))
        #expect(!received(replay, [0x80, 96, 0, 1]), "the far end's media: its DTLS is done, the probe goes")
        #expect(replay.due(at: Self.at(1_000)) == nil)
        #expect(!sent(replay, Self.handshake(record: 1, Self.message(11, sequence: 1, [2])), at: 1_000), "our probe goes at our next datagram")

        let other = HandshakeReplay()
        #expect(sent(other, Self.handshake(record: 0, Self.message(1, sequence: 0, [1])), at: 0))
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
        #expect(server.due(at: Self.at(150)) == [Self.record(20, sequence: 5, body: [1]), finished],
                "nothing new from the client: the flight goes again")
    }

    @Test func aFlightNobodyAnswersIsLeftToOpenSSLAfterItsLastReplay() {
        let replay = HandshakeReplay()
        #expect(sent(replay, Self.handshake(record: 0, Self.message(1, sequence: 0, [1])), at: 0))
        var time = 0, replays = 0
        while let flight = replay.due(at: Self.at(time)) {
            if !flight.isEmpty { replays += 1 }
            time += 50
            if time > 60_000 { break }
        }
        #expect(replays == HandshakeReplay.maximumReplays)
    }
}
