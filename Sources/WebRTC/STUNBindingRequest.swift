/// A STUN Binding request as an ICE connectivity check carries it (RFC 8445 §7.1.1, RFC 5389):
/// the 20-byte header, the given attributes, then MESSAGE-INTEGRITY (HMAC-SHA1 under the far
/// end's ICE password, the short-term credential) and FINGERPRINT (CRC-32). Built, never parsed:
/// libnice reads what comes back. The HMAC is passed in, so this file needs no imports.
struct STUNBindingRequest {
    static let magicCookie: UInt32 = 0x2112_A442
    static let headerLength = 20

    enum Attribute {
        static let username: UInt16 = 0x0006, messageIntegrity: UInt16 = 0x0008, priority: UInt16 = 0x0024
        static let software: UInt16 = 0x8022, fingerprint: UInt16 = 0x8028
        static let iceControlled: UInt16 = 0x8029, iceControlling: UInt16 = 0x802A
    }

    var transactionID: [UInt8]
    /// Type and value, in order; each value is padded to four bytes.
    var attributes: [(type: UInt16, value: [UInt8])]

    /// An ICE check from this side to the far end: USERNAME is "far end's ufrag:ours", PRIORITY
    /// the one a peer-reflexive candidate of ours would have (RFC 8445 §7.1.1), and the role
    /// attribute this side's agent holds, with `tieBreaker`.
    static func iceCheck(transactionID: [UInt8], localUfrag: String, remoteUfrag: String, controlling: Bool,
                         tieBreaker: UInt64) -> STUNBindingRequest {
        let peerReflexivePriority: UInt32 = 110 << 24 | 65_535 << 8 | 255
        return STUNBindingRequest(transactionID: transactionID, attributes: [
            (Attribute.username, Array("\(remoteUfrag):\(localUfrag)".utf8)),
            (Attribute.priority, bigEndian(UInt64(peerReflexivePriority), bytes: 4)),
            (controlling ? Attribute.iceControlling : Attribute.iceControlled, bigEndian(tieBreaker, bytes: 8)),
        ])
    }

    /// The message's bytes, integrity keyed with `password` (the far end's `a=ice-pwd`).
    func encoded(password: String, hmacSHA1: (_ key: [UInt8], _ message: [UInt8]) -> [UInt8]) -> [UInt8] {
        var message = Self.bigEndian(0x0001, bytes: 2) + [0, 0] + Self.bigEndian(UInt64(Self.magicCookie), bytes: 4) + transactionID
        for attribute in attributes { Self.append(attribute.type, attribute.value, to: &message) }
        // Each of the last two is computed over the message as it stands, its header's length
        // already counting the attribute being added (RFC 5389 §15.4, §15.5).
        Self.setLength(message.count - Self.headerLength + 24, in: &message)
        Self.append(Attribute.messageIntegrity, hmacSHA1(Array(password.utf8), message), to: &message)
        Self.setLength(message.count - Self.headerLength + 8, in: &message)
        Self.append(Attribute.fingerprint, Self.bigEndian(UInt64(CRC32.checksum(message) ^ 0x5354_554E), bytes: 4), to: &message)
        return message
    }

    private static func append(_ type: UInt16, _ value: [UInt8], to message: inout [UInt8]) {
        message += bigEndian(UInt64(type), bytes: 2) + bigEndian(UInt64(value.count), bytes: 2) + value
        message += [UInt8](repeating: 0, count: (4 - value.count % 4) % 4)
    }

    private static func setLength(_ length: Int, in message: inout [UInt8]) {
        message[2] = UInt8(truncatingIfNeeded: length >> 8)
        message[3] = UInt8(truncatingIfNeeded: length)
    }

    static func bigEndian(_ value: UInt64, bytes: Int) -> [UInt8] {
        (0..<bytes).map { UInt8(truncatingIfNeeded: value >> (8 * UInt64(bytes - 1 - $0))) }
    }
}

/// CRC-32 (ISO 3309, the reflected 0xEDB88320 polynomial), as STUN's FINGERPRINT uses it.
enum CRC32 {
    private static let table: [UInt32] = (0..<256).map { index in
        (0..<8).reduce(UInt32(index)) { crc, _ in crc & 1 == 1 ? 0xEDB8_8320 ^ (crc >> 1) : crc >> 1 }
    }

    static func checksum(_ bytes: [UInt8]) -> UInt32 {
        ~bytes.reduce(~UInt32(0)) { crc, byte in table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
    }
}
