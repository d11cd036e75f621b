internal import CSoup
import Foundation
internal import GLibCore

/// Opens client WebSockets (ws:// and wss://).
public enum WebSocketClient {
    /// Settings beyond the handshake itself; the defaults suit signaling sockets.
    public struct Options: Sendable {
        public var userAgent: String
        /// When non-empty, the server certificate must be one of these (see `HTTPClient`).
        public var pinnedCertificates: [CertificateFingerprint]
        /// More pins, by certificate or public key (`CertificatePin`).
        public var pins: [CertificatePin] = []
        public var acceptInvalidCertificates: Bool
        public var trustedAuthorities: TrustedAuthorities?
        /// libsoup's `keepalive-interval`: a ping this often; nil keeps libsoup's default (off).
        public var keepaliveInterval: Duration?
        /// Larger incoming messages fail the connection (libsoup's default is only 128 KiB).
        public var maxIncomingPayloadSize: Int
        /// What the connection may hold that the server has not read; a send past it closes the
        /// connection with 1008 (see `HTTPServer.init`). nil (the default): no bound, as what a
        /// client queues is its own sending.
        public var maxOutgoingBytes: Int?

        public init(userAgent: String = "ECVKit", pinnedCertificates: [CertificateFingerprint] = [],
                    acceptInvalidCertificates: Bool = false, trustedAuthorities: TrustedAuthorities? = nil,
                    keepaliveInterval: Duration? = nil, maxIncomingPayloadSize: Int = 4 << 20) {
            self.userAgent = userAgent
            self.pinnedCertificates = pinnedCertificates
            self.acceptInvalidCertificates = acceptInvalidCertificates
            self.trustedAuthorities = trustedAuthorities
            self.keepaliveInterval = keepaliveInterval
            self.maxIncomingPayloadSize = maxIncomingPayloadSize
        }
    }

    /// Connects and completes the opening handshake.
    ///
    /// - Parameters:
    ///   - headers: sent on the HTTP upgrade request (authentication tokens, `additionalHeaders`).
    ///   - connectTimeout: bounds the whole opening: resolve, TCP, TLS and the upgrade response.
    /// - Throws: `HTTPError`; a server that answers the upgrade with anything but 101 gives
    ///   `.webSocketRejected` with its status.
    public static func connect(url: String, headers: HTTPHeaders = [:], origin: String? = nil,
                               protocols: [String] = [], connectTimeout: Duration = .seconds(10),
                               options: Options = Options()) async throws(HTTPError) -> WebSocketConnection {
        let uri = try ParsedURI.parse(url, schemes: ["ws", "wss", "http", "https"])
        let required = TLSPolicy(pins: options.pinnedCertificates.map(CertificatePin.init) + options.pins,
                                 trustedAuthorities: options.trustedAuthorities)
        if let refusal = required.refusal(scheme: uri.scheme, url: url) { throw refusal }
        if let problem = headers.validationProblem() { throw .invalidRequest(url: url, reason: problem) }
        if let bad = protocols.first(where: { $0.isEmpty || !$0.utf8.allSatisfy(isTokenByte) }) {
            throw .invalidRequest(url: url, reason: "subprotocol \"\(bad)\" is not a valid token")
        }
        let connector = WebSocketConnector(uri: uri, headers: headers, origin: origin, protocols: protocols,
                                           connectTimeout: connectTimeout, options: options)
        let result = await withTaskCancellationHandler {
            MainLoopActor.perform { connector.start() }
            return await connector.outcome()
        } onCancel: {
            MainLoopActor.perform { connector.fail(.cancelled(url: url)) }
        }
        return try result.get()
    }
}

/// One opening handshake on the main loop. Same failure discipline as `HTTPExchange`: record the
/// reason, cancel, report it when libsoup's callback arrives. Isolated to the main loop but
/// `result`, a thread-safe `OneShot` the caller awaits.
@MainLoopActor
private final class WebSocketConnector {
    private let uri: ParsedURI
    private let headers: HTTPHeaders
    private let origin: String?
    private let protocols: [String]
    private let connectTimeout: Duration
    private let options: WebSocketClient.Options
    private let result = OneShot<WebSocketConnection, HTTPError>()
    private let cancellable = OwnedGObject(adopting: UnsafeMutableRawPointer(g_cancellable_new()))
    private var session: OwnedGObject?
    private var message: OwnedGObject?
    private var observer: MessageObserver?
    private var timer: MainLoop.Timer?
    private var decidedFailure: HTTPError?
    private var finished = false

    nonisolated init(uri: ParsedURI, headers: HTTPHeaders, origin: String?, protocols: [String],
         connectTimeout: Duration, options: WebSocketClient.Options) {
        self.uri = uri
        self.headers = headers
        self.origin = origin
        self.protocols = protocols
        self.connectTimeout = connectTimeout
        self.options = options
    }

    private var url: String { uri.text }
    private var cancellableHandle: UnsafeMutablePointer<GCancellable> { cancellable.typed(GCancellable.self) }

    nonisolated func outcome() async -> Result<WebSocketConnection, HTTPError> {
        do { return .success(try await result.value()) } catch { return .failure(error) }
    }

    func start() {
        guard !finished else { return }
        if let decidedFailure { return finish(.failure(decidedFailure)) }
        let policy = TLSPolicy(pins: options.pinnedCertificates.map(CertificatePin.init) + options.pins,
                               acceptInvalidCertificates: options.acceptInvalidCertificates,
                               trustedAuthorities: options.trustedAuthorities)
        let session = makeSession(userAgent: options.userAgent, backstopTimeout: connectTimeout, idleTimeout: .seconds(1),
                                  maxConnectionsPerHost: 1, policy: policy)
        self.session = session
        guard let created = soup_message_new_from_uri("GET", uri.pointer) else {
            return finish(.failure(.invalidRequest(url: url, reason: "libsoup refused the URL")))
        }
        let message = OwnedGObject(adopting: UnsafeMutableRawPointer(created))
        self.message = message
        appendHeaders(headers, to: soup_message_get_request_headers(created))
        observer = MessageObserver(message: message, policy: policy, trackProgress: false,
                                   onPhase: { _ in }, onPinMismatch: { [unowned self] fingerprint in
            self.fail(.certificateNotPinned(url: self.url, fingerprint: fingerprint?.hex ?? "none presented"))
        })
        timer = MainLoopActor.schedule(after: connectTimeout) { [self] in
            fail(.connectTimeout(url: url, after: connectTimeout))
        }
        var protocolList: [UnsafeMutablePointer<CChar>?] = protocols.map { strdup($0) } + [nil]
        defer { protocolList.forEach { free($0) } }
        protocolList.withUnsafeMutableBufferPointer { list in
            soup_session_websocket_connect_async(session.typed(SoupSession.self), created, origin,
                                                 protocols.isEmpty ? nil : list.baseAddress,
                                                 G_PRIORITY_DEFAULT, cancellableHandle, { _, asyncResult, data in
                onMainLoop(releaseAsyncContext(data, as: WebSocketConnector.self), asyncResult) { $0.connected($1) }
            }, retainAsyncContext(self))
        }
    }

    func fail(_ failure: HTTPError) {
        guard !finished else { return }
        if decidedFailure == nil { decidedFailure = failure }
        if message != nil { g_cancellable_cancel(cancellableHandle) }
    }

    private func connected(_ asyncResult: OpaquePointer?) {
        var error: UnsafeMutablePointer<GError>?
        let connection = soup_session_websocket_connect_finish(session?.typed(SoupSession.self), asyncResult, &error)
        let glibError = error.map { GLibError(taking: $0) }
        guard let connection else { return finish(.failure(failure(from: glibError))) }
        let raw = UnsafeMutableRawPointer(connection)
        defer { g_object_unref(raw) } // `wrap` takes its own reference
        if let decidedFailure {
            soup_websocket_connection_close(connection, gushort(1001), nil)
            return finish(.failure(decidedFailure))
        }
        let wrapped = WebSocketCore.wrap(raw, url: url, side: .client,
                                         maxIncomingPayloadSize: options.maxIncomingPayloadSize,
                                         maxOutgoingBytes: options.maxOutgoingBytes, keepaliveInterval: options.keepaliveInterval)
        finish(.success(wrapped))
    }

    private func failure(from error: GLibError?) -> HTTPError {
        if let decidedFailure { return decidedFailure }
        guard let error else { return .network(url: url, message: "libsoup reported no error") }
        if error.domain == soup_websocket_error_quark() {
            let status = message.map { Int(soup_message_get_status($0.opaque).rawValue) } ?? 0
            return .webSocketRejected(url: url, status: status, message: error.message)
        }
        if error.domain == g_tls_error_quark(), let problem = observer?.certificateProblem {
            return .tlsFailure(url: url, message: "\(problem) (\(error.message))")
        }
        return HTTPError.from(error, url: url, connecting: true, connectTimeout: connectTimeout, readTimeout: connectTimeout)
    }

    private func finish(_ outcome: Result<WebSocketConnection, HTTPError>) {
        guard !finished else { return }
        finished = true
        timer?.cancel()
        timer = nil
        observer?.detach()
        observer = nil
        message = nil
        session = nil // the WebSocket owns its stream; the session is no longer needed
        result.resolve(outcome)
    }
}
