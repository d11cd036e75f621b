internal import CSoup
internal import GLibCore

/// An HTTP/1.1 client over libsoup 3, running on the library's GLib main loop.
///
/// Timeouts are separate and precise (libsoup's own `timeout` property is whole seconds and does
/// not tell connecting from waiting):
/// - `connectTimeout` bounds resolving, the TCP connect and the TLS handshake of a *new*
///   connection. It starts at the message's first `network-event` and ends at `starting`, so time
///   spent queued behind other requests or on a reused keep-alive connection never counts.
/// - `readTimeout` bounds silence once the connection is ready: it restarts whenever request
///   bytes are written or response headers/body bytes arrive, so a slow but steady download
///   is fine and a server that accepts and then says nothing is not.
/// When either fires, the request's `GCancellable` is cancelled and the error says which timeout
/// it was. libsoup's `timeout` is set one second past the larger of the two as a backstop, and
/// its `idle-timeout` to `idleTimeout` (how long a pooled keep-alive connection may sit unused).
///
/// A non-2xx response is returned, not thrown. Cancelling the calling task cancels the request.
public final class HTTPClient: Sendable {
    public let connectTimeout: Duration
    public let readTimeout: Duration
    public let userAgent: String
    public let maxResponseBytes: Int
    let policy: TLSPolicy
    private let session: SessionHolder

    /// - Parameters:
    ///   - pinnedCertificates: when non-empty, a server is trusted only if its certificate is one of
    ///     these (CA validation is then irrelevant, so self-signed servers can be pinned).
    ///   - pins: more pins, by certificate or by public key (`CertificatePin`); same rule.
    ///   - acceptInvalidCertificates: trust any certificate; ignored when certificates are pinned.
    ///     For tests and lab servers only.
    ///   - trustedAuthorities: a private CA store replacing the system one.
    public init(connectTimeout: Duration = .milliseconds(3000),
                readTimeout: Duration = .milliseconds(3000),
                userAgent: String = "ECVKit",
                pinnedCertificates: [CertificateFingerprint] = [],
                pins: [CertificatePin] = [],
                acceptInvalidCertificates: Bool = false,
                trustedAuthorities: TrustedAuthorities? = nil,
                idleTimeout: Duration = .seconds(60),
                maxConnectionsPerHost: Int = 8,
                maxResponseBytes: Int = 64 << 20) {
        self.connectTimeout = connectTimeout
        self.readTimeout = readTimeout
        self.userAgent = userAgent
        self.maxResponseBytes = maxResponseBytes
        let policy = TLSPolicy(pins: pinnedCertificates.map(CertificatePin.init) + pins, acceptInvalidCertificates: acceptInvalidCertificates,
                               trustedAuthorities: trustedAuthorities)
        self.policy = policy
        let backstop = max(connectTimeout, readTimeout)
        let perHost = max(1, maxConnectionsPerHost)
        session = SessionHolder {
            makeSession(userAgent: userAgent, backstopTimeout: backstop, idleTimeout: idleTimeout,
                        maxConnectionsPerHost: perHost, policy: policy)
        }
    }

    /// Sends `request` and returns the complete response, whatever its status.
    public func send(_ request: HTTPRequest) async throws(HTTPError) -> HTTPResponse {
        let uri = try ParsedURI.parse(request.url, schemes: ["http", "https"])
        if let refusal = policy.refusal(scheme: uri.scheme, url: request.url) { throw refusal }
        guard !request.method.isEmpty, request.method.utf8.allSatisfy(isTokenByte) else {
            throw .invalidRequest(url: request.url, reason: "method \"\(request.method)\" is not a valid HTTP token")
        }
        if let problem = request.headers.validationProblem() {
            throw .invalidRequest(url: request.url, reason: problem)
        }
        let exchange = HTTPExchange(request: request, uri: uri, client: self, session: session)
        let result = await withTaskCancellationHandler {
            MainLoopActor.perform { exchange.start() }
            return await exchange.outcome()
        } onCancel: {
            MainLoopActor.perform { exchange.fail(.cancelled(url: request.url)) }
        }
        return try result.get()
    }

    /// `send` for a GET.
    public func get(_ url: String, headers: HTTPHeaders = [:]) async throws(HTTPError) -> HTTPResponse {
        try await send(.get(url, headers: headers))
    }
}

/// The client's `SoupSession`, created on first use on the main-loop thread and aborted and
/// released there when the last user (client or in-flight exchange) lets go.
@MainLoopActor
final class SessionHolder {
    private var session: OwnedGObject?
    private let make: @MainLoopActor () -> OwnedGObject

    nonisolated init(make: @escaping @MainLoopActor () -> OwnedGObject) { self.make = make }

    var object: OwnedGObject {
        if let session { return session }
        let created = make()
        session = created
        return created
    }

    /// Closes pooled connections now rather than whenever the GObject happens to finalise.
    isolated deinit {
        if let session { soup_session_abort(session.typed(SoupSession.self)) }
    }
}
