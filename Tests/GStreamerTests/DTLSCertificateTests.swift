import Foundation
@testable import GStreamer
import Testing

@Suite("DTLS certificate") struct DTLSCertificateTests {
    /// The certificate, read back by OpenSSL's own command line, is ECDSA P-256 and self-signed,
    /// and our fingerprint is the one `openssl x509 -fingerprint -sha256` computes.
    @Test(arguments: DTLSCertificate.KeyType.allCases)
    func aGeneratedCertificateIsWhatItSays(keyType: DTLSCertificate.KeyType) throws {
        let certificate = try DTLSCertificate.generate(keyType)
        #expect(certificate.pem.hasPrefix("-----BEGIN CERTIFICATE-----"))
        #expect(certificate.pem.contains("-----BEGIN PRIVATE KEY-----"))
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("dtls-\(UUID().uuidString).pem")
        try certificate.pem.write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let text = try openssl(["x509", "-in", file.path, "-noout", "-text", "-fingerprint", "-sha256"])
        #expect(text.contains("Subject: CN = ECVKit"))
        #expect(text.contains("Issuer: CN = ECVKit"))
        switch keyType {
        case .ecdsaP256:
            #expect(text.contains("id-ecPublicKey"))
            #expect(text.contains("prime256v1"))
            #expect(text.contains("ecdsa-with-SHA256"))
        case .rsa2048:
            #expect(text.contains("rsaEncryption"))
            #expect(text.contains("2048 bit"))
        }
        let line = try #require(text.split(separator: "\n").first { $0.hasPrefix("sha256 Fingerprint=") })
        #expect(line.dropFirst("sha256 Fingerprint=".count) == certificate.sha256Fingerprint)
    }

    @Test func theProcessKeepsOneCertificatePerKeyType() throws {
        let first = try DTLSCertificate.shared(.ecdsaP256), second = try DTLSCertificate.shared(.ecdsaP256)
        #expect(first == second)
        #expect(try DTLSCertificate.generate(.ecdsaP256) != first)
    }

    private func openssl(_ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }
}
