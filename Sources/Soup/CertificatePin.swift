import Foundation

/// One pin a TLS client checks the server's certificate against: the SHA-256 of the whole
/// certificate (DER), or of its public key (SubjectPublicKeyInfo, the HPKP `sha256/` form, which
/// survives re-issuing a certificate with the same key).
///
/// Parsing is strict: text that is none of the accepted forms is an error, never a pin dropped
/// in silence, so a typo cannot turn pinning off.
public struct CertificatePin: Sendable, Hashable, CustomStringConvertible {
    public enum Kind: Sendable, Hashable { case certificate, publicKey }

    public let kind: Kind
    /// The 32 SHA-256 bytes.
    public let sha256: [UInt8]

    public init(kind: Kind, sha256 bytes: [UInt8]) throws(CertificateError) {
        guard bytes.count == 32 else {
            throw .invalidFingerprint("\(bytes.count) bytes", reason: "a SHA-256 digest has 32 bytes")
        }
        self.kind = kind
        sha256 = bytes
    }

    /// A certificate fingerprint as a certificate pin.
    public init(_ fingerprint: CertificateFingerprint) {
        kind = .certificate
        sha256 = fingerprint.sha256
    }

    /// Parses one pin:
    /// - `sha256/<base64>`: the SHA-256 of the public key (SPKI), as HPKP and OkHttp write it;
    /// - 64 hex digits (colons and spaces allowed, optional `sha256:` prefix): the certificate's SHA-256;
    /// - a path to a `.der`/`.cer`/`.crt`/`.pem` file (or any path starting with `/`, `./`, `~/`):
    ///   pins that certificate;
    /// - Base64 of a DER certificate (the EnQualify `…Base64List` form): pins that certificate.
    public init(parsing text: String) throws(CertificateError) {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        if trimmed.lowercased().hasPrefix("sha256/") {
            let encoded = String(trimmed.dropFirst("sha256/".count))
            if encoded.count == 44 || encoded.count == 43 {
                var padded = encoded
                while padded.count % 4 != 0 { padded += "=" }
                guard let data = Data(base64Encoded: padded), data.count == 32 else {
                    throw .invalidFingerprint(text, reason: "sha256/ must be followed by the Base64 of 32 bytes")
                }
                try self.init(kind: .publicKey, sha256: [UInt8](data))
                return
            }
            self.init(try CertificateFingerprint(hex: encoded))
            return
        }
        if Self.looksLikePath(trimmed) {
            let path = (trimmed as NSString).expandingTildeInPath
            guard let data = FileManager.default.contents(atPath: path) else {
                throw .cannotLoad(path: trimmed, message: "the pinned certificate file is missing or unreadable")
            }
            if let pem = String(data: data, encoding: .utf8), pem.contains("-----BEGIN CERTIFICATE-----") {
                self.init(try CertificateFingerprint(pemCertificate: pem))
            } else {
                let der = [UInt8](data)
                guard DERReader.isCertificate(der) else {
                    throw .invalidCertificate(reason: "\(trimmed) holds neither a DER nor a PEM certificate")
                }
                self.init(CertificateFingerprint(derCertificate: der))
            }
            return
        }
        let hexDigits = trimmed.lowercased().replacingOccurrences(of: "sha256:", with: "").filter { $0 != ":" && $0 != " " }
        if hexDigits.count == 64, hexDigits.allSatisfy(\.isHexDigit) {
            self.init(try CertificateFingerprint(hex: trimmed))
            return
        }
        if trimmed.count > 64, let data = Data(base64Encoded: trimmed, options: .ignoreUnknownCharacters),
           DERReader.isCertificate([UInt8](data)) {
            self.init(CertificateFingerprint(derCertificate: [UInt8](data)))
            return
        }
        throw .invalidFingerprint(text, reason: "not a pin: expected sha256/<base64 of the public key's SHA-256>, "
            + "64 hex digits of the certificate's SHA-256, a certificate file, or a Base64 DER certificate")
    }

    /// Pins of every entry; the first malformed one is the error.
    public static func parse(_ texts: [String]) throws(CertificateError) -> [CertificatePin] {
        var pins: [CertificatePin] = []
        for text in texts { pins.append(try CertificatePin(parsing: text)) }
        return pins
    }

    /// Whether a DER certificate matches this pin.
    public func matches(certificateDER der: [UInt8]) -> Bool {
        switch kind {
        case .certificate: return sha256Digest(der) == sha256
        case .publicKey: return DERReader.subjectPublicKeyInfo(ofCertificate: der).map { sha256Digest($0) == sha256 } ?? false
        }
    }

    /// The SPKI pin (`sha256/<base64>`) of a DER certificate; nil when it does not parse.
    public static func publicKeyPin(ofCertificateDER der: [UInt8]) -> CertificatePin? {
        guard let spki = DERReader.subjectPublicKeyInfo(ofCertificate: der) else { return nil }
        // A SHA-256 digest always has the pin's length; nil only if that ever stopped being so.
        return try? CertificatePin(kind: .publicKey, sha256: sha256Digest(spki))
    }

    public var description: String {
        switch kind {
        case .certificate: "certificate SHA-256 " + sha256.map { String(format: "%02X", $0) }.joined(separator: ":")
        case .publicKey: "sha256/" + Data(sha256).base64EncodedString()
        }
    }

    private static func looksLikePath(_ text: String) -> Bool {
        text.hasPrefix("/") || text.hasPrefix("./") || text.hasPrefix("~/") || text.hasPrefix("../")
            || [".der", ".cer", ".crt", ".pem"].contains { text.lowercased().hasSuffix($0) }
    }
}

