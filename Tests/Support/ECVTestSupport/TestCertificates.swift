import Foundation

/// A private CA and a server certificate for 127.0.0.1 it signed, made with the openssl CLI in a
/// directory that lives as long as the test process (GIO re-reads CA files per handshake), plus
/// the pins openssl computes for the server certificate.
package struct TestCertificates: Sendable {
    package let directory: URL
    package var caFile: String { directory.appendingPathComponent("ca.pem").path }
    package var certificateFile: String { directory.appendingPathComponent("leaf.pem").path }
    package var keyFile: String { directory.appendingPathComponent("leaf.key").path }
    package var derFile: String { directory.appendingPathComponent("leaf.der").path }
    /// `sha256/<base64>` of the server's public key.
    package let publicKeyPin: String
    /// The server certificate's SHA-256 as `openssl x509 -fingerprint -sha256` prints it.
    package let certificatePin: String
    /// The same pin form for a key the server does not have.
    package let foreignPublicKeyPin: String

    package static let shared: Result<TestCertificates, any Error> = Result { try TestCertificates() }

    private init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("ecv-tls-\(getpid())-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let key = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes"
        let spki = { (file: String) in
            "openssl x509 -in \(file) -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64"
        }
        let script = """
            set -e
            openssl req -x509 \(key) -keyout ca.key -out ca.pem -days 2 -subj '/CN=ECVKit Test CA' 2>/dev/null
            openssl req \(key) -keyout leaf.key -out leaf.csr -subj '/CN=127.0.0.1' 2>/dev/null
            printf 'subjectAltName=IP:127.0.0.1\\nbasicConstraints=CA:FALSE\\nextendedKeyUsage=serverAuth\\n' > leaf.ext
            openssl x509 -req -in leaf.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out leaf.pem -days 2 -extfile leaf.ext 2>/dev/null
            openssl x509 -in leaf.pem -outform der -out leaf.der
            openssl req -x509 \(key) -keyout other.key -out other.pem -days 2 -subj '/CN=other' 2>/dev/null
            echo "sha256/$(\(spki("leaf.pem")))"
            openssl x509 -in leaf.pem -noout -fingerprint -sha256 | sed 's/.*=//'
            echo "sha256/$(\(spki("other.pem")))"
            """
        let lines = try Self.shell(script, in: directory).split(separator: "\n").map(String.init)
        guard lines.count == 3 else { throw CocoaError(.fileReadCorruptFile) }
        publicKeyPin = lines[0]
        certificatePin = lines[1]
        foreignPublicKeyPin = lines[2]
    }

    private static func shell(_ script: String, in directory: URL) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", script]
        process.currentDirectoryURL = directory
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw CocoaError(.executableLoad) }
        return String(decoding: data, as: UTF8.self)
    }
}
