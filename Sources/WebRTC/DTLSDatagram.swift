/// One datagram of a DTLS transport as `HandshakeReplay` reads it: far-end input before any
/// authentication, so every length is checked against what is there. No imports: the libFuzzer
/// target `dtls` (`Tests/Fuzz/run.sh`) compiles this file alone.

/// What crosses the transport: DTLS handshake (or change-cipher-spec) records, DTLS
/// application data, media (SRTP/SRTCP, after the handshake only), or something else (STUN,
/// an alert, a malformed record).
enum DTLSDatagram: Equatable {
    case handshake(DTLSHandshakeProgress)
    case applicationData
    case media
    case other

    static let handshakeHeaderLength = 12
    /// DTLS record content types (RFC 6347 §4.1, RFC 5246 §6.2.1).
    enum RecordType {
        static let changeCipherSpec: UInt8 = 20, handshake: UInt8 = 22, applicationData: UInt8 = 23
    }

    /// RFC 7983's demultiplexing by first byte; a DTLS datagram is then read record by record
    /// (type, version, epoch, sequence number, length: 13 bytes, then the body), and an epoch 0
    /// handshake record message by message (type, length, message sequence, fragment offset,
    /// fragment length: 12 bytes, then the fragment). A record or message that overruns the
    /// datagram ends the reading; what was read before it stands.
    init(_ bytes: UnsafeRawBufferPointer) {
        guard let first = bytes.first else { self = .other; return }
        switch first {
        case 20...63: self = Self.readRecords(bytes)
        case 128...191: self = .media
        default: self = .other
        }
    }

    private static func readRecords(_ bytes: UnsafeRawBufferPointer) -> DTLSDatagram {
        var furthest: DTLSHandshakeProgress?
        func reached(_ progress: DTLSHandshakeProgress) { furthest = max(furthest ?? progress, progress) }
        for record in DTLSRecord.all(in: bytes) {
            switch record.type {
            case RecordType.applicationData: return .applicationData
            case RecordType.changeCipherSpec: reached(DTLSHandshakeProgress(epoch: record.epoch, position: .max))
            case RecordType.handshake where record.epoch > 0: reached(DTLSHandshakeProgress(epoch: record.epoch, position: 0))
            case RecordType.handshake:
                var message = record.body.lowerBound
                while message + handshakeHeaderLength <= record.body.upperBound {
                    let sequence = DTLSRecord.field(bytes, message + 4, 2), fragmentLength = DTLSRecord.field(bytes, message + 9, 3)
                    let next = message + handshakeHeaderLength + Int(fragmentLength)
                    guard next <= record.body.upperBound else { break }
                    let fragmentEnd = min(DTLSRecord.field(bytes, message + 6, 3) + fragmentLength, 0xFF_FFFF)
                    reached(DTLSHandshakeProgress(epoch: 0, position: sequence << 24 | fragmentEnd))
                    message = next
                }
            default: break
            }
        }
        return furthest.map { .handshake($0) } ?? .other
    }
}

/// One record's header in a DTLS datagram: where it starts, its type, epoch and sequence number,
/// and where its body lies. Reading stops at the first record that overruns the datagram.
struct DTLSRecord: Equatable {
    static let headerLength = 13
    static let sequenceOffset = 5, sequenceLength = 6

    var offset: Int
    var type: UInt8
    var epoch: UInt16
    var sequence: UInt64
    var body: Range<Int>

    static func all(in bytes: UnsafeRawBufferPointer) -> [DTLSRecord] {
        var records: [DTLSRecord] = [], offset = 0
        while offset + headerLength <= bytes.count {
            let body = offset + headerLength, end = body + Int(field(bytes, offset + 11, 2))
            guard end <= bytes.count else { break }
            records.append(DTLSRecord(offset: offset, type: bytes[offset], epoch: UInt16(field(bytes, offset + 3, 2)),
                                      sequence: field(bytes, offset + sequenceOffset, sequenceLength), body: body..<end))
            offset = end
        }
        return records
    }

    /// The big-endian number in `count` bytes at `at`.
    static func field(_ bytes: UnsafeRawBufferPointer, _ at: Int, _ count: Int) -> UInt64 {
        (at..<at + count).reduce(0) { $0 << 8 | UInt64(bytes[$1]) }
    }
}

/// How far a handshake has gone, as one datagram shows it: its furthest record's epoch, then
/// (in epoch 0, where records are in the clear) the handshake message's sequence number and
/// the end of its fragment; a change cipher spec comes after every message of its epoch.
/// Records of a later epoch are encrypted: their epoch alone is known.
struct DTLSHandshakeProgress: Comparable {
    var epoch: UInt16
    var position: UInt64

    static func < (lhs: DTLSHandshakeProgress, rhs: DTLSHandshakeProgress) -> Bool {
        (lhs.epoch, lhs.position) < (rhs.epoch, rhs.position)
    }
}
