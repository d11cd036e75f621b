// Pure Swift, no C: Tests/Fuzz builds this file on its own under libFuzzer.

/// Just enough DER to find a certificate's SubjectPublicKeyInfo (RFC 5280 §4.1):
/// Certificate ::= SEQUENCE { tbsCertificate SEQUENCE { [0] version OPTIONAL, serialNumber,
/// signature, issuer, validity, subject, subjectPublicKeyInfo, … }, … }.
enum DERReader {
    /// (tag, start of the whole element, start of its contents, end) of the element at `offset`.
    static func element(_ bytes: [UInt8], at offset: Int) -> (tag: UInt8, start: Int, contents: Int, end: Int)? {
        guard offset + 2 <= bytes.count else { return nil }
        let tag = bytes[offset]
        var index = offset + 1
        var length = Int(bytes[index])
        index += 1
        if length & 0x80 != 0 {
            let count = length & 0x7F
            guard (1...4).contains(count), index + count <= bytes.count else { return nil }
            length = 0
            for byte in bytes[index..<(index + count)] { length = length << 8 | Int(byte) }
            index += count
        }
        guard length >= 0, index + length <= bytes.count else { return nil }
        return (tag, offset, index, index + length)
    }

    static func isCertificate(_ der: [UInt8]) -> Bool {
        guard let outer = element(der, at: 0), outer.tag == 0x30, outer.end == der.count else { return false }
        return subjectPublicKeyInfo(ofCertificate: der) != nil
    }

    static func subjectPublicKeyInfo(ofCertificate der: [UInt8]) -> [UInt8]? {
        guard let certificate = element(der, at: 0), certificate.tag == 0x30,
              let tbs = element(der, at: certificate.contents), tbs.tag == 0x30 else { return nil }
        var cursor = tbs.contents
        guard var field = element(der, at: cursor) else { return nil }
        if field.tag == 0xA0 { // explicit version
            cursor = field.end
            guard let next = element(der, at: cursor) else { return nil }
            field = next
        }
        // serialNumber, signature, issuer, validity, subject
        for _ in 0..<5 {
            guard let skipped = element(der, at: cursor), skipped.end <= tbs.end else { return nil }
            cursor = skipped.end
        }
        guard let spki = element(der, at: cursor), spki.tag == 0x30, spki.end <= tbs.end else { return nil }
        return Array(der[spki.start..<spki.end])
    }
}
