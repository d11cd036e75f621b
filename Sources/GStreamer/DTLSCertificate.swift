internal import COpenSSL
import Foundation
import GLibCore

/// A self-signed certificate and its private key in PEM (certificate first, then key: the order
/// GStreamer's `dtlsdec` reads its `pem` property in), for webrtcbin's DTLS transports.
///
/// GStreamer's own default is an RSA certificate, but several WebRTC stacks (aiortc among them)
/// offer only ECDHE-ECDSA cipher suites, so calls use an ECDSA P-256 certificate by default, as
/// browsers do. The SDP fingerprint follows whatever certificate the transport holds.
package struct DTLSCertificate: Sendable, Equatable {
    package enum KeyType: String, Sendable, CaseIterable {
        /// ECDSA over NIST P-256 (prime256v1), what browsers generate.
        case ecdsaP256 = "ecdsa-p256"
        /// RSA 2048, for peers that cannot do ECDSA.
        case rsa2048 = "rsa-2048"
    }

    package let keyType: KeyType
    /// Certificate PEM followed by private-key PEM.
    package let pem: String
    /// SHA-256 of the certificate's DER, as the SDP's `a=fingerprint:sha-256` writes it.
    package let sha256Fingerprint: String

    /// Generates a new key and a certificate valid from an hour ago for `validity`.
    package static func generate(_ keyType: KeyType = .ecdsaP256, commonName: String = "ECVKit",
                                validity: Duration = .seconds(30 * 24 * 3600)) throws(GStreamerError) -> DTLSCertificate {
        guard let key = makeKey(keyType) else { throw .notSupported("cannot generate a \(keyType.rawValue) key: \(openSSLError())") }
        defer { EVP_PKEY_free(key) }
        guard let certificate = X509_new() else { throw .notSupported("cannot allocate an X.509 certificate") }
        defer { X509_free(certificate) }
        let serial = UInt64.random(in: 1...UInt64(Int64.max))
        let ok = X509_set_version(certificate, 2) == 1
            && ASN1_INTEGER_set_uint64(X509_get_serialNumber(certificate), serial) == 1
            && X509_gmtime_adj(X509_getm_notBefore(certificate), -3600) != nil
            && X509_gmtime_adj(X509_getm_notAfter(certificate), Int(validity.components.seconds)) != nil
            && X509_set_pubkey(certificate, key) == 1
            && setName(commonName, on: certificate)
            && X509_sign(certificate, key, EVP_sha256()) > 0
        guard ok else { throw .notSupported("cannot make a DTLS certificate: \(openSSLError())") }
        guard let certificatePEM = pemText({ PEM_write_bio_X509($0, certificate) }),
              let keyPEM = pemText({ PEM_write_bio_PrivateKey($0, key, nil, nil, 0, nil, nil) }),
              let der = derBytes(certificate) else {
            throw .notSupported("cannot encode the DTLS certificate: \(openSSLError())")
        }
        return DTLSCertificate(keyType: keyType, pem: certificatePEM + keyPEM, sha256Fingerprint: fingerprint(der))
    }

    /// One certificate per key type for the whole process (generating one costs milliseconds for
    /// ECDSA and much more for RSA; browsers also keep one per page).
    package static func shared(_ keyType: KeyType) throws(GStreamerError) -> DTLSCertificate {
        let cached = processCertificates.withLock { $0[keyType] }
        if let cached { return cached }
        let made = try generate(keyType)
        return processCertificates.withLock { cache in
            if let existing = cache[keyType] { return existing }
            cache[keyType] = made
            return made
        }
    }

    private static let processCertificates = Locked<[KeyType: DTLSCertificate]>([:])

    private static func makeKey(_ keyType: KeyType) -> OpaquePointer? {
        let algorithm = keyType == .ecdsaP256 ? "EC" : "RSA"
        guard let context = EVP_PKEY_CTX_new_from_name(nil, algorithm, nil) else { return nil }
        defer { EVP_PKEY_CTX_free(context) }
        guard EVP_PKEY_keygen_init(context) == 1 else { return nil }
        switch keyType {
        case .ecdsaP256: guard EVP_PKEY_CTX_set_group_name(context, "P-256") == 1 else { return nil }
        case .rsa2048: guard EVP_PKEY_CTX_set_rsa_keygen_bits(context, 2048) == 1 else { return nil }
        }
        var key: OpaquePointer?
        guard EVP_PKEY_generate(context, &key) == 1 else { return nil }
        return key
    }

    private static func setName(_ commonName: String, on certificate: OpaquePointer) -> Bool {
        guard let name = X509_get_subject_name(certificate) else { return false }
        let added = commonName.withCString { value in
            X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, value, -1, -1, 0)
        }
        return added == 1 && X509_set_issuer_name(certificate, name) == 1
    }

    /// Runs `write` into a memory BIO and returns what it wrote, as text.
    private static func pemText(_ write: (OpaquePointer) -> Int32) -> String? {
        guard let bio = BIO_new(BIO_s_mem()) else { return nil }
        defer { BIO_free(bio) }
        guard write(bio) == 1 else { return nil }
        let length = Int(BIO_ctrl_pending(bio))
        var bytes = [UInt8](repeating: 0, count: length)
        guard BIO_read(bio, &bytes, Int32(length)) == Int32(length) else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func derBytes(_ certificate: OpaquePointer) -> [UInt8]? {
        let length = i2d_X509(certificate, nil)
        guard length > 0 else { return nil }
        var bytes = [UInt8](repeating: 0, count: Int(length))
        let written = bytes.withUnsafeMutableBufferPointer { buffer -> Int32 in
            var cursor: UnsafeMutablePointer<UInt8>? = buffer.baseAddress
            return i2d_X509(certificate, &cursor)
        }
        return written == length ? bytes : nil
    }

    private static func fingerprint(_ der: [UInt8]) -> String {
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var size: UInt32 = 0
        guard EVP_Digest(der, der.count, &digest, &size, EVP_sha256(), nil) == 1 else { return "" }
        return digest.prefix(Int(size)).map { String(format: "%02X", $0) }.joined(separator: ":")
    }

    private static func openSSLError() -> String {
        let code = ERR_get_error()
        guard code != 0 else { return "no detail from OpenSSL" }
        var buffer = [UInt8](repeating: 0, count: 256)
        buffer.withUnsafeMutableBufferPointer { bytes in
            bytes.withMemoryRebound(to: CChar.self) { ERR_error_string_n(code, $0.baseAddress, $0.count) }
        }
        return String(decoding: buffer.prefix { $0 != 0 }, as: UTF8.self)
    }
}
