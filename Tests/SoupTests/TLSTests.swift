import Foundation
import Soup
import Synchronization
import Testing

/// Certificates made with the openssl CLI for this test run: a self-signed server certificate, and
/// a private CA with a server certificate it signed. Fingerprints come from openssl too, so the
/// binding's own DER hashing is checked against an independent tool.
struct TLSMaterial: Sendable {
    let selfSigned: TLSIdentity
    let selfSignedFingerprint: CertificateFingerprint
    let caSigned: TLSIdentity
    let caSignedFingerprint: CertificateFingerprint
    /// Self-signed certificates for 127.0.0.1 whose validity ended in 2020 and starts in 2090.
    let expired: TLSIdentity
    let expiredFingerprint: CertificateFingerprint
    let notYetValid: TLSIdentity
    let notYetValidFingerprint: CertificateFingerprint
    /// The private CA's certificate; GIO re-reads CA files per handshake, so tests write it to a
    /// file they own for as long as they need it.
    let authorityPEM: String

    static let shared: Result<TLSMaterial, any Error> = Result { try TLSMaterial() }

    private init() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let openssl = "/usr/bin/openssl"
        let ecKey = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        try run(openssl, ["req", "-x509"] + ecKey + ["-keyout", "self.key", "-out", "self.pem", "-days", "2",
                          "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"], in: directory)
        try run(openssl, ["req", "-x509"] + ecKey + ["-keyout", "ca.key", "-out", "ca.pem", "-days", "2",
                          "-subj", "/CN=ECVKit Test CA"], in: directory)
        try run(openssl, ["req"] + ecKey + ["-keyout", "leaf.key", "-out", "leaf.csr", "-subj", "/CN=127.0.0.1"], in: directory)
        try "subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n"
            .write(to: directory.appendingPathComponent("leaf.ext"), atomically: true, encoding: .utf8)
        try run(openssl, ["x509", "-req", "-in", "leaf.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
                          "-out", "leaf.pem", "-days", "2", "-extfile", "leaf.ext"], in: directory)
        func fingerprint(_ file: String) throws -> CertificateFingerprint {
            try CertificateFingerprint(hex: run(openssl, ["x509", "-in", file, "-noout", "-fingerprint", "-sha256"], in: directory))
        }
        let path = { (name: String) in directory.appendingPathComponent(name).path }
        selfSigned = try TLSIdentity(certificateFile: path("self.pem"), privateKeyFile: path("self.key"))
        selfSignedFingerprint = try fingerprint("self.pem")
        caSigned = try TLSIdentity(certificatePEM: String(contentsOfFile: path("leaf.pem"), encoding: .utf8),
                                   privateKeyPEM: String(contentsOfFile: path("leaf.key"), encoding: .utf8))
        caSignedFingerprint = try fingerprint("leaf.pem")
        authorityPEM = try String(contentsOfFile: path("ca.pem"), encoding: .utf8)
        // `openssl req -x509` takes only a positive `-days`; `openssl ca -selfsign` takes any dates.
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("issued"), withIntermediateDirectories: true)
        try "".write(to: directory.appendingPathComponent("issued/index.txt"), atomically: true, encoding: .utf8)
        try "01\n".write(to: directory.appendingPathComponent("issued/serial"), atomically: true, encoding: .utf8)
        try """
            [ca]
            default_ca = own
            [own]
            database = issued/index.txt
            serial = issued/serial
            new_certs_dir = issued
            default_md = sha256
            policy = any
            x509_extensions = server
            unique_subject = no
            [any]
            commonName = supplied
            [server]
            subjectAltName = IP:127.0.0.1
            """.write(to: directory.appendingPathComponent("dated.cnf"), atomically: true, encoding: .utf8)
        func dated(_ name: String, from start: String, to end: String) throws -> (TLSIdentity, CertificateFingerprint) {
            try run(openssl, ["req"] + ecKey + ["-keyout", "\(name).key", "-out", "\(name).csr", "-subj", "/CN=127.0.0.1"], in: directory)
            try run(openssl, ["ca", "-batch", "-config", "dated.cnf", "-selfsign", "-keyfile", "\(name).key", "-in", "\(name).csr",
                              "-out", "\(name).pem", "-startdate", start, "-enddate", end], in: directory)
            return (try TLSIdentity(certificateFile: path("\(name).pem"), privateKeyFile: path("\(name).key")), try fingerprint("\(name).pem"))
        }
        (expired, expiredFingerprint) = try dated("expired", from: "20200101000000Z", to: "20200102000000Z")
        (notYetValid, notYetValidFingerprint) = try dated("future", from: "20900101000000Z", to: "20900102000000Z")
    }
}

/// Counts requests that reached a route: a rejected certificate must mean zero.
final class HitCounter: Sendable {
    private let hits = Mutex(0)
    var count: Int { hits.withLock { $0 } }
    func install(on server: HTTPServer, method: String = "POST", path: String = "/api") {
        server.route(method, path) { [self] request in
            hits.withLock { $0 += 1 }
            return .text("secret for \(request.text ?? "")")
        }
    }
}

extension SoupTests {
    @Suite("TLS and certificate pinning") struct TLSTests {
        let material: TLSMaterial

        init() throws { material = try TLSMaterial.shared.get() }

        private func post(_ client: HTTPClient, _ base: String) async throws(HTTPError) -> HTTPResponse {
            try await client.send(HTTPRequest(method: "POST", url: "\(base)/api", body: Array("token".utf8)))
        }

        @Test func fingerprintsMatchOpenSSL() throws {
            #expect(material.selfSigned.fingerprint == material.selfSignedFingerprint)
            #expect(material.caSigned.fingerprint == material.caSignedFingerprint)
            #expect(try CertificateFingerprint(hex: material.selfSignedFingerprint.hex) == material.selfSignedFingerprint)
            #expect(throws: CertificateError.self) { try CertificateFingerprint(hex: "AB:CD") }
            #expect(throws: CertificateError.self) { try CertificateFingerprint(hex: String(repeating: "zz", count: 32)) }
            #expect(throws: CertificateError.self) { try TLSIdentity(certificateFile: "/nonexistent.pem", privateKeyFile: "/nonexistent.key") }
            #expect(throws: CertificateError.self) { try TrustedAuthorities(pemFile: "/nonexistent-ca.pem") }
            #expect(throws: CertificateError.self) { try TrustedAuthorities(pemFile: "/etc/hostname") }
        }

        @Test func selfSignedServerIsRejectedWithoutAPin() async throws {
            let hits = HitCounter()
            try await withServer(tls: material.selfSigned, { hits.install(on: $0) }) { _, base in
                #expect(base.hasPrefix("https://"))
                do throws(HTTPError) {
                    _ = try await post(HTTPClient(), base)
                    Issue.record("untrusted certificate accepted")
                } catch {
                    guard case .tlsFailure(let url, let message) = error else { Issue.record("wrong error \(error)"); return }
                    #expect(url == "\(base)/api")
                    #expect(message.contains("not a trusted CA"))
                }
            }
            #expect(hits.count == 0)
        }

        @Test func pinnedSelfSignedServerIsAccepted() async throws {
            let hits = HitCounter()
            try await withServer(tls: material.selfSigned, { hits.install(on: $0) }) { _, base in
                let client = HTTPClient(pinnedCertificates: [material.selfSignedFingerprint])
                let response = try await post(client, base)
                #expect(response.text == "secret for token")
            }
            #expect(hits.count == 1)
        }

        /// A pin waives the CA and host-name checks only: a pinned certificate outside its
        /// validity is refused, and no request reaches the server.
        @Test(arguments: ["expired", "not yet valid"])
        func pinnedCertificateOutOfItsValidityIsRejected(_ which: String) async throws {
            let (identity, fingerprint) = which == "expired" ? (material.expired, material.expiredFingerprint)
                                                             : (material.notYetValid, material.notYetValidFingerprint)
            let hits = HitCounter()
            try await withServer(tls: identity, { hits.install(on: $0) }) { _, base in
                let client = HTTPClient(pinnedCertificates: [fingerprint], acceptInvalidCertificates: true)
                do throws(HTTPError) {
                    _ = try await post(client, base)
                    Issue.record("a pinned \(which) certificate was accepted")
                } catch {
                    guard case .tlsFailure(_, let message) = error else { Issue.record("wrong error \(error)"); return }
                    #expect(message.contains("pinned certificate is not in force"), "\(message)")
                    #expect(message.contains(which == "expired" ? "certificate expired" : "certificate not yet valid"), "\(message)")
                }
            }
            #expect(hits.count == 0)
        }

        @Test func wrongPinIsRejectedBeforeTheRequestIsSent() async throws {
            let hits = HitCounter()
            try await withServer(tls: material.selfSigned, { hits.install(on: $0) }) { _, base in
                // Even "accept invalid certificates" does not override a pin.
                let client = HTTPClient(pinnedCertificates: [material.caSignedFingerprint], acceptInvalidCertificates: true)
                do throws(HTTPError) {
                    _ = try await post(client, base)
                    Issue.record("unpinned certificate accepted")
                } catch {
                    #expect(error == .certificateNotPinned(url: "\(base)/api", fingerprint: material.selfSignedFingerprint.hex))
                }
            }
            #expect(hits.count == 0)
        }

        @Test func acceptInvalidCertificatesAcceptsSelfSigned() async throws {
            try await withServer(tls: material.selfSigned, { HitCounter().install(on: $0) }) { _, base in
                let response = try await post(HTTPClient(acceptInvalidCertificates: true), base)
                #expect(response.status == 200)
            }
        }

        @Test func caTrustedServerStillHasToMatchThePin() async throws {
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let caFile = directory.appendingPathComponent("ca.pem")
            try material.authorityPEM.write(to: caFile, atomically: true, encoding: .utf8)
            let authorities = try TrustedAuthorities(pemFile: caFile.path)
            let hits = HitCounter()
            try await withServer(tls: material.caSigned, { hits.install(on: $0) }) { _, base in
                // Valid chain, no pin: accepted by ordinary CA validation.
                let trusting = HTTPClient(trustedAuthorities: authorities)
                let trusted = try await post(trusting, base)
                #expect(trusted.status == 200)
                // Valid chain, right pin.
                let pinned = HTTPClient(pinnedCertificates: [material.caSignedFingerprint], trustedAuthorities: authorities)
                let pinnedResponse = try await post(pinned, base)
                #expect(pinnedResponse.status == 200)
                // Valid chain, wrong pin: libsoup never asks (the chain is fine), so the pin is
                // checked when the handshake completes and the request must not go out.
                let mispinned = HTTPClient(pinnedCertificates: [material.selfSignedFingerprint], trustedAuthorities: authorities)
                do throws(HTTPError) {
                    _ = try await post(mispinned, base)
                    Issue.record("CA-valid but unpinned certificate accepted")
                } catch {
                    #expect(error == .certificateNotPinned(url: "\(base)/api", fingerprint: material.caSignedFingerprint.hex))
                }
            }
            #expect(hits.count == 2)
        }

        /// Pins or a private CA mean TLS: a cleartext URL, given or reached by a redirect, is
        /// refused before a byte of the request (or its credentials) leaves.
        @Test func pinnedClientsRefuseCleartext() async throws {
            let hits = HitCounter()
            let landings = HitCounter()
            let accepted = AcceptedSockets()
            try await withServer({ server in
                hits.install(on: server)
                accepted.install(on: server)
                // Where the redirect leads (a 303 after a POST is followed with a GET).
                landings.install(on: server, method: "GET", path: "/landing")
            }) { _, plain in
                #expect(plain.hasPrefix("http://"))
                let pinned = HTTPClient(pinnedCertificates: [material.selfSignedFingerprint])
                await #expect(throws: HTTPError.cleartextRefused(url: "\(plain)/api")) { try await post(pinned, plain) }
                let caFile = try temporaryDirectory().appendingPathComponent("ca.pem")
                defer { try? FileManager.default.removeItem(at: caFile.deletingLastPathComponent()) }
                try material.authorityPEM.write(to: caFile, atomically: true, encoding: .utf8)
                let bound = HTTPClient(trustedAuthorities: try TrustedAuthorities(pemFile: caFile.path))
                await #expect(throws: HTTPError.cleartextRefused(url: "\(plain)/api")) { try await post(bound, plain) }
                let socketURL = plain.replacingOccurrences(of: "http://", with: "ws://") + "/ws"
                await #expect(throws: HTTPError.cleartextRefused(url: socketURL)) {
                    _ = try await WebSocketClient.connect(url: socketURL, options: .init(pinnedCertificates: [material.selfSignedFingerprint]))
                }
                // A pinned HTTPS service that redirects to the cleartext one.
                try await withServer(tls: material.selfSigned, { server in
                    server.route("POST", "/api") { _ in HTTPServerResponse(status: 303, headers: ["Location": "\(plain)/landing"]) }
                }) { _, secure in
                    do throws(HTTPError) {
                        _ = try await post(pinned, secure)
                        Issue.record("a redirect to cleartext was followed")
                    } catch {
                        #expect(error == .certificateNotPinned(url: "\(secure)/api", fingerprint: "none presented"), "\(error)")
                    }
                    // Unpinned, the same redirect is followed: the refusal is the pin's doing.
                    let response = try await post(HTTPClient(acceptInvalidCertificates: true), secure)
                    #expect(response.text == "secret for ")
                }
            }
            #expect(hits.count == 0)
            #expect(landings.count == 1) // the unpinned client's only
        }

        @Test func secureWebSocketHonoursPins() async throws {
            let accepted = AcceptedSockets()
            let (client, serverSide) = try await withServer(tls: material.selfSigned, { accepted.install(on: $0) }) { _, base in
                let url = base.replacingOccurrences(of: "https://", with: "wss://") + "/ws"
                let client = try await WebSocketClient.connect(
                    url: url, options: .init(pinnedCertificates: [material.selfSignedFingerprint]))
                let (server, _) = try await accepted.next()
                try client.send(text: "over TLS")
                #expect(try await collect(server.events, count: 1) == [.text("over TLS")])
                do throws(HTTPError) {
                    _ = try await WebSocketClient.connect(url: url, options: .init(pinnedCertificates: [material.caSignedFingerprint]))
                    Issue.record("WebSocket accepted an unpinned certificate")
                } catch {
                    #expect(error == .certificateNotPinned(url: url, fingerprint: material.selfSignedFingerprint.hex))
                }
                return (client, server)
            }
            // The server stopped with the TLS socket still open (its side still referenced, so not
            // closed politely): the client sees the stream end without a close frame.
            let ended = try await collect(client.events)
            #expect(ended.last == .closed(code: 1006, reason: ""), "\(ended)")
            #expect(ended.filter { if case .closed = $0 { true } else { false } }.count == 1)
            let serverEnded = try await collect(serverSide.events)
            #expect(serverEnded.last == .closed(code: 1006, reason: ""), "\(serverEnded)")
        }
    }
}
