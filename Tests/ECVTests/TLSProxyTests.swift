import ECV
import ECVAgent
import ECVProtocol
import ECVService
import ECVTestSupport
import Foundation
import Soup
import Synchronization
import Testing

/// Issue #34: a pinned caller behind a TLS-terminating proxy. The service is plain HTTP behind
/// the proxy, so it used to answer the room join with `ws://<Host>/ws`, and the SDK opened the
/// collider there with its caller token in clear. With the proxy trusted (`trustedProxies`,
/// `ecv serve --trusted-proxy`), its `X-Forwarded-Proto: https` gets `wss://`, and the whole call
/// goes over TLS; without, the SDK refuses the `ws://` URL and sends nothing in clear.
@Suite(.serialized) struct TLSProxyTests {
    @Test func aPinnedCallerBehindATrustedProxyGetsWSSAndConnects() async throws {
        let certificates = try TestCertificates.shared.get()
        let backend = try await Backend.start { $0.trustedProxies = ["127.0.0.1"] }
        let proxy = try await TLSTerminatingProxy.start(certificates: certificates, backend: backend.url)
        let agent = try await backend.agent() // inside, next to the service
        let sdk = try pinnedSDK(certificates, serviceUrl: proxy.url)
        let log = EventLog(sdk)
        let renderer = CountingRenderer()
        let call = try await placeCall(sdk, log: log, renderer: renderer)
        _ = try await log.wait(for: .WebRtcConnected, call.rtcId)
        try await eventually(.seconds(10), "the agent's picture through the proxy") { renderer.count > 5 }
        let joins = proxy.wssURLs
        #expect(!joins.isEmpty && joins.allSatisfy { $0.hasPrefix("wss://127.0.0.1:\(proxy.port)/") }, "\(joins)")
        #expect(proxy.forwarded.contains("WS \(ECVAPI.signalingSocket)"), "the collider went through the proxy: \(proxy.forwarded)")
        #expect(proxy.forwarded.contains { $0.hasPrefix("POST /join/") })
        call.hangup()
        _ = try await log.wait(for: .CallEnded, call.rtcId)
        await agent.logout()
        await proxy.stop()
        await backend.close()
    }

    @Test func withoutTheTrustedProxyTheCallerRefusesTheCleartextCollider() async throws {
        let certificates = try TestCertificates.shared.get()
        let backend = try await Backend.start()
        let proxy = try await TLSTerminatingProxy.start(certificates: certificates, backend: backend.url)
        let agent = try await backend.agent()
        let sdk = try pinnedSDK(certificates, serviceUrl: proxy.url)
        let log = EventLog(sdk)
        let call = try await placeCall(sdk, log: log)
        let failure = try await log.wait(for: .Error, call.rtcId)
        #expect(failure.detail?.contains("refusing cleartext ws://") == true, "\(failure)")
        #expect(proxy.wssURLs.allSatisfy { $0.hasPrefix("ws://") } && !proxy.wssURLs.isEmpty)
        // Nothing went anywhere but through the proxy's TLS port, and no collider socket was opened.
        #expect(!proxy.forwarded.contains("WS \(ECVAPI.signalingSocket)"), "\(proxy.forwarded)")
        #expect(backend.service.roomCount <= 1)
        call.hangup()
        await agent.logout()
        await proxy.stop()
        await backend.close()
    }

    private func pinnedSDK(_ certificates: TestCertificates, serviceUrl: String) throws -> ECVSdk {
        var configuration = ECVSdkConfiguration(name: "proxied", serviceUrl: serviceUrl, useQueueSocket: true)
        configuration.trustedCAFile = certificates.caFile
        configuration.pinnedCertificates = [certificates.publicKeyPin]
        return try ECVSdk(config: configuration)
    }
}

/// A TLS-terminating reverse proxy made of the repo's own server and clients, as nginx would be
/// set up: HTTPS and WSS in front (the test certificate), plain HTTP and WS to the service, the
/// client's `Host` kept, `X-Forwarded-Proto: https` and `X-Forwarded-For` added. It writes down
/// what it forwarded and the `wss_url` of every join answer it passed back.
final class TLSTerminatingProxy: Sendable {
    let url: String
    let port: UInt16
    private let server: HTTPServer
    private let record = Mutex<(forwarded: [String], wssURLs: [String], pumps: [Task<Void, Never>])>(([], [], []))

    var forwarded: [String] { record.withLock { $0.forwarded } }
    var wssURLs: [String] { record.withLock { $0.wssURLs } }

    static func start(certificates: TestCertificates, backend: String) async throws -> TLSTerminatingProxy {
        let server = HTTPServer(tls: try TLSIdentity(certificateFile: certificates.certificateFile, privateKeyFile: certificates.keyFile))
        let port = try await server.listen()
        let proxy = TLSTerminatingProxy(server: server, port: port)
        proxy.install(backend: backend)
        return proxy
    }

    private init(server: HTTPServer, port: UInt16) {
        self.server = server
        self.port = port
        url = "https://127.0.0.1:\(port)"
    }

    func stop() async {
        for pump in record.withLock({ $0.pumps }) { pump.cancel() }
        await server.stop()
    }

    private func note(_ line: String) { record.withLock { $0.forwarded.append(line) } }

    private static func forwardedHeaders(_ request: HTTPServerRequest) -> HTTPHeaders {
        var headers = HTTPHeaders()
        for field in request.headers where !["connection", "content-length", "transfer-encoding", "upgrade",
                                              "sec-websocket-key", "sec-websocket-version", "sec-websocket-extensions"]
            .contains(field.name.lowercased()) {
            headers.add(field.name, field.value)
        }
        headers["X-Forwarded-Proto"] = "https"
        headers["X-Forwarded-For"] = String(request.remoteAddress?.split(separator: ":").first ?? "")
        return headers
    }

    private static func target(_ request: HTTPServerRequest) -> String {
        let query = request.query.map { item in
            [item.name, item.value ?? ""].map { $0.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? $0 }.joined(separator: "=")
        }
        return request.path + (query.isEmpty ? "" : "?" + query.joined(separator: "&"))
    }

    private func install(backend: String) {
        let client = HTTPClient(connectTimeout: .seconds(5), readTimeout: .seconds(30))
        server.route("*", "/") { [self] request in
            note("\(request.method) \(request.path)")
            let response = try await client.send(HTTPRequest(method: request.method, url: backend + Self.target(request),
                                                             headers: Self.forwardedHeaders(request), body: request.body))
            if request.path.hasPrefix("/join/"), let join = try? ECVJSON.decode(JoinResponse.self, from: response.data),
               let wss = join.params?.wssUrl {
                record.withLock { $0.wssURLs.append(wss) }
            }
            var headers = HTTPHeaders()
            for field in response.headers where !["connection", "content-length", "transfer-encoding"].contains(field.name.lowercased()) {
                headers.add(field.name, field.value)
            }
            return HTTPServerResponse(status: response.status, headers: headers, body: response.body)
        }
        let webSocketBase = ECVAPI.webSocketBase(backend)
        for path in [ECVAPI.queueSocket, ECVAPI.agentSocket, ECVAPI.signalingSocket] {
            server.webSocket(path: path) { [self] front, request in
                note("WS \(request.path)")
                let pump = Task {
                    guard let back = try? await WebSocketClient.connect(url: webSocketBase + Self.target(request),
                                                                        headers: Self.forwardedHeaders(request), connectTimeout: .seconds(5)) else {
                        try? front.close(code: 1011, reason: "upstream unreachable")
                        return
                    }
                    await withTaskGroup(of: Void.self) { group in
                        group.addTask { await Self.pump(front, into: back) }
                        group.addTask { await Self.pump(back, into: front) }
                    }
                }
                record.withLock { $0.pumps.append(pump) }
            }
        }
    }

    /// Everything `source` receives goes to `sink`; its close closes `sink`.
    private static func pump(_ source: WebSocketConnection, into sink: WebSocketConnection) async {
        for await event in source.events {
            switch event {
            case .text(let text): try? sink.send(text: text)
            case .binary(let bytes): try? sink.send(data: bytes)
            case .error: break
            case .closed(let code, let reason):
                let sendable = (1000...1003).contains(code) || (1007...1014).contains(code) || (3000...4999).contains(code)
                try? sink.close(code: sendable ? code : 1001, reason: String(reason.utf8.prefix(120)) ?? "")
            }
        }
    }
}
