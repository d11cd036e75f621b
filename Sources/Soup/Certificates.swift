internal import CSoup
import Foundation

/// Why certificate material given to the binding is unusable.
public enum CertificateError: Error, Sendable, Equatable, CustomStringConvertible {
    case invalidFingerprint(String, reason: String)
    case invalidCertificate(reason: String)
    case cannotLoad(path: String, message: String)

    public var description: String {
        switch self {
        case .invalidFingerprint(let text, let reason): "invalid SHA-256 fingerprint \"\(text)\": \(reason)"
        case .invalidCertificate(let reason): "invalid certificate: \(reason)"
        case .cannotLoad(let path, let message): "cannot load \(path): \(message)"
        }
    }
}

/// The SHA-256 digest of a certificate's DER encoding: what a pinned client compares.
///
/// Pin the certificate itself (not its public key), as the EnQualify module's `.der` pins do.
public struct CertificateFingerprint: Sendable, Hashable, CustomStringConvertible {
    /// The 32 digest bytes.
    public let sha256: [UInt8]

    public init(sha256 bytes: [UInt8]) throws(CertificateError) {
        guard bytes.count == 32 else {
            throw .invalidFingerprint(bytes.map { String(format: "%02x", $0) }.joined(), reason: "a SHA-256 digest has 32 bytes, not \(bytes.count)")
        }
        sha256 = bytes
    }

    /// Parses hex as printed by `openssl x509 -fingerprint -sha256` ("AB:CD:…"), with or without
    /// colons or spaces, optionally prefixed "sha256:" / "SHA256 Fingerprint=".
    public init(hex text: String) throws(CertificateError) {
        var digits = text.trimmingCharacters(in: .whitespacesAndNewlines)
        for prefix in ["sha256 fingerprint=", "sha256:", "sha256/"] where digits.lowercased().hasPrefix(prefix) {
            digits = String(digits.dropFirst(prefix.count))
        }
        let hexDigits = digits.filter { $0 != ":" && $0 != " " }
        guard hexDigits.count == 64 else {
            throw .invalidFingerprint(text, reason: "expected 64 hex digits, found \(hexDigits.count) characters")
        }
        var bytes: [UInt8] = []
        var index = hexDigits.startIndex
        while index < hexDigits.endIndex {
            let next = hexDigits.index(index, offsetBy: 2)
            guard let byte = UInt8(hexDigits[index..<next], radix: 16) else {
                throw .invalidFingerprint(text, reason: "\"\(hexDigits[index..<next])\" is not hex")
            }
            bytes.append(byte)
            index = next
        }
        sha256 = bytes
    }

    /// The fingerprint of a DER-encoded certificate (the contents of a `.der` file).
    public init(derCertificate der: [UInt8]) {
        sha256 = sha256Digest(der)
    }

    /// The fingerprint of a Base64-encoded DER certificate (the EnQualify `...Base64List` form).
    public init(base64DERCertificate text: String) throws(CertificateError) {
        guard let data = Data(base64Encoded: text, options: .ignoreUnknownCharacters), !data.isEmpty else {
            throw .invalidCertificate(reason: "not Base64-encoded DER")
        }
        self.init(derCertificate: [UInt8](data))
    }

    /// The fingerprint of the first certificate in PEM text.
    public init(pemCertificate pem: String) throws(CertificateError) {
        var error: UnsafeMutablePointer<GError>?
        guard let certificate = g_tls_certificate_new_from_pem(pem, -1, &error) else {
            throw .invalidCertificate(reason: error.map { GLibError(taking: $0).message } ?? "no certificate in PEM")
        }
        defer { g_object_unref(certificate) }
        self.init(derCertificate: derBytes(of: UnsafeMutableRawPointer(certificate)))
    }

    /// Upper-case hex with colons, the way `openssl x509 -fingerprint -sha256` prints it.
    public var hex: String { sha256.map { String(format: "%02X", $0) }.joined(separator: ":") }

    public var description: String { hex }
}

/// The DER encoding of a `GTlsCertificate` (borrowed), read from its "certificate" property.
func derBytes(of certificate: UnsafeMutableRawPointer) -> [UInt8] {
    var value = GValue()
    g_value_init(&value, g_byte_array_get_type())
    defer { g_value_unset(&value) }
    g_object_get_property(certificate.assumingMemoryBound(to: GObject.self), "certificate", &value)
    guard let array = g_value_get_boxed(&value)?.assumingMemoryBound(to: GByteArray.self),
          let data = array.pointee.data else { return [] }
    return Array(UnsafeBufferPointer(start: data, count: Int(array.pointee.len)))
}

/// SHA-256 through GLib's GChecksum, so the binding needs no other crypto library.
func sha256Digest(_ bytes: [UInt8]) -> [UInt8] {
    guard let checksum = g_checksum_new(G_CHECKSUM_SHA256) else { return [] }
    defer { g_checksum_free(checksum) }
    bytes.withUnsafeBufferPointer { g_checksum_update(checksum, $0.baseAddress, gssize($0.count)) }
    var digest = [UInt8](repeating: 0, count: 32)
    var length = gsize(digest.count)
    digest.withUnsafeMutableBufferPointer { g_checksum_get_digest(checksum, $0.baseAddress, &length) }
    return Array(digest.prefix(Int(length)))
}

/// A certificate with its private key, for an HTTPS / WSS server.
public struct TLSIdentity: Sendable {
    let certificate: OwnedGObject

    /// Loads PEM files; the certificate file may carry the chain after the leaf.
    public init(certificateFile: String, privateKeyFile: String) throws(CertificateError) {
        var error: UnsafeMutablePointer<GError>?
        guard let certificate = g_tls_certificate_new_from_files(certificateFile, privateKeyFile, &error) else {
            throw .cannotLoad(path: "\(certificateFile) + \(privateKeyFile)",
                              message: error.map { GLibError(taking: $0).message } ?? "unknown error")
        }
        self.certificate = OwnedGObject(adopting: UnsafeMutableRawPointer(certificate))
    }

    /// Parses PEM text holding the certificate (and chain) and the private key.
    public init(certificatePEM: String, privateKeyPEM: String) throws(CertificateError) {
        var error: UnsafeMutablePointer<GError>?
        let combined = certificatePEM + "\n" + privateKeyPEM
        guard let certificate = g_tls_certificate_new_from_pem(combined, -1, &error) else {
            throw .invalidCertificate(reason: error.map { GLibError(taking: $0).message } ?? "unknown error")
        }
        self.certificate = OwnedGObject(adopting: UnsafeMutableRawPointer(certificate))
    }

    /// The fingerprint clients pin for this identity.
    public var fingerprint: CertificateFingerprint {
        CertificateFingerprint(derCertificate: derBytes(of: certificate.raw))
    }

    /// The SPKI pin (`sha256/<base64>`) clients pin for this identity's key, which survives
    /// re-issuing the certificate with the same key; nil when the certificate does not parse.
    public var publicKeyPin: CertificatePin? {
        CertificatePin.publicKeyPin(ofCertificateDER: derBytes(of: certificate.raw))
    }
}

/// Certificate authorities a client trusts *instead of* the system store (a private CA).
///
/// GIO re-reads the file whenever it sets up a TLS connection, so it must stay in place for as
/// long as clients use it; it is checked for at least one certificate here, so a wrong path or an
/// empty file fails now rather than on the first handshake.
public struct TrustedAuthorities: Sendable {
    let database: OwnedGObject

    /// Uses every CA certificate in a PEM file.
    public init(pemFile: String) throws(CertificateError) {
        var error: UnsafeMutablePointer<GError>?
        guard FileManager.default.isReadableFile(atPath: pemFile) else {
            throw .cannotLoad(path: pemFile, message: "file is missing or unreadable")
        }
        let certificates = g_tls_certificate_list_new_from_file(pemFile, &error)
        if let error { throw .cannotLoad(path: pemFile, message: GLibError(taking: error).message) }
        guard let certificates else { throw .cannotLoad(path: pemFile, message: "no PEM certificate in the file") }
        g_list_free_full(certificates) { g_object_unref($0) }
        guard let database = g_tls_file_database_new(pemFile, &error) else {
            throw .cannotLoad(path: pemFile, message: error.map { GLibError(taking: $0).message } ?? "unknown error")
        }
        self.database = OwnedGObject(adopting: UnsafeMutableRawPointer(database))
    }
}
