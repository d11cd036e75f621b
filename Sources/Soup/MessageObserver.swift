internal import CGLibShims
internal import CSoup
import Foundation
internal import GLibCore

/// How a client decides whether to trust a server certificate.
struct TLSPolicy: Sendable {
    /// When non-empty, the peer certificate must match one of these, whatever the CA store says.
    var pins: [CertificatePin] = []
    /// Accept certificates that fail CA validation (only when nothing is pinned).
    var acceptInvalidCertificates = false
    /// Replaces the system CA store for this client.
    var trustedAuthorities: TrustedAuthorities?

    func matches(_ der: [UInt8]) -> Bool { pins.contains { $0.matches(certificateDER: der) } }

    /// Pins or a private CA say the service is reached over TLS: a cleartext URL, given or learned
    /// (a join answer's `wss_url`, a redirect), would send what they protect in the clear.
    var requiresTLS: Bool { !pins.isEmpty || trustedAuthorities != nil }

    /// `.cleartextRefused` for an `http`/`ws` URL when TLS is required; nil otherwise.
    func refusal(scheme: String, url: String) -> HTTPError? {
        requiresTLS && (scheme == "http" || scheme == "ws") ? .cleartextRefused(url: url) : nil
    }
}

/// Where a client message is in its life, as far as timeouts care.
enum MessagePhase {
    /// A new connection is being set up for this message: resolve, TCP connect, TLS handshake.
    case connecting
    /// The connection is ready (new or reused) and the request is about to be written.
    case starting
    /// Bytes moved in either direction.
    case progress
}

/// Watches one client `SoupMessage`: reports its phases and enforces the TLS policy.
///
/// Pinning has two paths because libsoup only asks about certificates that *failed* CA
/// validation (`accept-certificate`). A certificate the CA store trusts is checked when the
/// handshake completes (`network-event` TLS_HANDSHAKED), before the request is written; a
/// mismatch there fails the message through `onPinMismatch`, which cancels it.
@MainLoopActor
final class MessageObserver {
    let message: OwnedGObject
    private let handlers: SignalHandlerSet
    private let policy: TLSPolicy
    private var onPhase: ((MessagePhase) -> Void)?
    private var onPinMismatch: ((CertificateFingerprint?) -> Void)?
    /// Why CA validation rejected the certificate, for the error message.
    private(set) var certificateProblem: String?

    init(message: OwnedGObject, policy: TLSPolicy, trackProgress: Bool,
         onPhase: @escaping (MessagePhase) -> Void, onPinMismatch: @escaping (CertificateFingerprint?) -> Void) {
        self.message = message
        self.policy = policy
        self.onPhase = onPhase
        self.onPinMismatch = onPinMismatch
        handlers = SignalHandlerSet(on: message)

        let networkEvent: @convention(c) (OpaquePointer?, GSocketClientEvent, UnsafeMutableRawPointer?, UnsafeMutableRawPointer?) -> Void = {
            _, event, stream, data in
            onMainLoop(context(data, as: MessageObserver.self), stream) { $0.networkEvent(event, stream: $1) }
        }
        let acceptCertificate: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?, GTlsCertificateFlags, UnsafeMutableRawPointer?) -> gboolean = {
            _, certificate, errors, data in
            guard let certificate else { return 0 }
            let accepted = onMainLoop(context(data, as: MessageObserver.self), certificate) { $0.acceptUnverified($1, errors: errors) }
            return accepted == true ? 1 : 0
        }
        let starting: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?) -> Void = { _, data in
            let observer = context(data, as: MessageObserver.self)
            MainLoopActor.assumeIsolated {
                observer?.refuseCleartextRedirect()
                observer?.onPhase?(.starting)
            }
        }
        handlers.connect("network-event", unsafeBitCast(networkEvent, to: GCallback.self), context: self)
        handlers.connect("accept-certificate", unsafeBitCast(acceptCertificate, to: GCallback.self), context: self)
        handlers.connect("starting", unsafeBitCast(starting, to: GCallback.self), context: self)

        guard trackProgress else { return }
        let progress: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?) -> Void = { _, data in
            let observer = context(data, as: MessageObserver.self)
            MainLoopActor.assumeIsolated { observer?.onPhase?(.progress) }
        }
        let chunkProgress: @convention(c) (OpaquePointer?, guint, UnsafeMutableRawPointer?) -> Void = { _, _, data in
            let observer = context(data, as: MessageObserver.self)
            MainLoopActor.assumeIsolated { observer?.onPhase?(.progress) }
        }
        for signal in ["wrote-headers", "wrote-body", "got-informational", "got-headers"] {
            handlers.connect(signal, unsafeBitCast(progress, to: GCallback.self), context: self)
        }
        handlers.connect("wrote-body-data", unsafeBitCast(chunkProgress, to: GCallback.self), context: self)
    }

    /// Disconnects every handler and drops the callbacks (breaking the owner ↔ observer cycle).
    func detach() {
        handlers.disconnectAll()
        onPhase = nil
        onPinMismatch = nil
    }

    private func networkEvent(_ event: GSocketClientEvent, stream: UnsafeMutableRawPointer?) {
        switch event {
        case G_SOCKET_CLIENT_TLS_HANDSHAKED:
            verifyPin(stream: stream)
        case G_SOCKET_CLIENT_COMPLETE:
            break // "starting" follows and arms the I/O timer
        default:
            onPhase?(.connecting)
        }
    }

    /// The request's URL was checked before it was sent; a redirect changes it on the same message
    /// ("starting" comes again before the request is written). A pinned or CA-bound client that
    /// was sent on to `http://` fails here, as a connection that shows no certificate.
    private func refuseCleartextRedirect() {
        guard policy.requiresTLS, let uri = soup_message_get_uri(message.opaque),
              let scheme = g_uri_get_scheme(uri).map({ String(cString: $0) }), scheme == "http" || scheme == "ws" else { return }
        onPinMismatch?(nil)
    }

    private func verifyPin(stream: UnsafeMutableRawPointer?) {
        guard !policy.pins.isEmpty else { return }
        var certificate: UnsafeMutableRawPointer?
        if let stream, g_type_check_instance_is_a(stream.assumingMemoryBound(to: GTypeInstance.self), g_tls_connection_get_type()) != 0 {
            certificate = g_tls_connection_get_peer_certificate(stream.assumingMemoryBound(to: GTlsConnection.self)).map { UnsafeMutableRawPointer($0) }
        }
        if certificate == nil {
            certificate = soup_message_get_tls_peer_certificate(message.opaque).map { UnsafeMutableRawPointer($0) }
        }
        guard let certificate else {
            onPinMismatch?(nil) // TLS without a peer certificate cannot match a pin
            return
        }
        let der = derBytes(of: certificate)
        if !policy.matches(der) { onPinMismatch?(CertificateFingerprint(derCertificate: der)) }
    }

    /// A pin stands in for the CA and the host name only: it says which certificate the service
    /// has, not that the certificate is still in force. So a pinned certificate is refused when it
    /// is expired, not yet valid, revoked or otherwise faulty, as an unpinned one would be.
    private static let waivedByPin = GTlsCertificateFlags(G_TLS_CERTIFICATE_UNKNOWN_CA.rawValue | G_TLS_CERTIFICATE_BAD_IDENTITY.rawValue)

    private func acceptUnverified(_ certificate: UnsafeMutableRawPointer, errors: GTlsCertificateFlags) -> Bool {
        certificateProblem = describe(errors)
        guard !policy.pins.isEmpty else { return policy.acceptInvalidCertificates }
        let der = derBytes(of: certificate)
        guard policy.matches(der) else {
            onPinMismatch?(CertificateFingerprint(derCertificate: der))
            return false
        }
        let remaining = GTlsCertificateFlags(errors.rawValue & ~Self.waivedByPin.rawValue)
        guard remaining.rawValue == 0 else {
            certificateProblem = "the pinned certificate is not in force: " + describe(remaining)
            return false
        }
        return true
    }

    private func describe(_ errors: GTlsCertificateFlags) -> String {
        let names: [(GTlsCertificateFlags, String)] = [
            (G_TLS_CERTIFICATE_UNKNOWN_CA, "issuer is not a trusted CA"),
            (G_TLS_CERTIFICATE_BAD_IDENTITY, "certificate does not match the host"),
            (G_TLS_CERTIFICATE_NOT_ACTIVATED, "certificate not yet valid"),
            (G_TLS_CERTIFICATE_EXPIRED, "certificate expired"),
            (G_TLS_CERTIFICATE_REVOKED, "certificate revoked"),
            (G_TLS_CERTIFICATE_INSECURE, "insecure algorithm"),
            (G_TLS_CERTIFICATE_GENERIC_ERROR, "validation error"),
        ]
        let found = names.filter { errors.rawValue & $0.0.rawValue != 0 }.map(\.1)
        return found.isEmpty ? "certificate rejected" : found.joined(separator: ", ")
    }
}

/// Creates a `SoupSession` configured for the binding's clients.
///
/// `max-conns-per-host` is construct-only, hence `g_object_new_with_properties`; libsoup's own
/// `timeout` (whole seconds, covering connect and socket I/O) is set a second past our precise
/// timers as a backstop, and `idle-timeout` bounds how long a pooled keep-alive connection lingers.
@MainLoopActor
func makeSession(userAgent: String, backstopTimeout: Duration, idleTimeout: Duration,
                 maxConnectionsPerHost: Int, policy: TLSPolicy) -> OwnedGObject {
    let uintProperties: [(String, guint)] = [
        ("max-conns", guint(clamping: max(maxConnectionsPerHost, 10) * 4)),
        ("max-conns-per-host", guint(clamping: maxConnectionsPerHost)),
        ("timeout", guint(backstopTimeout.secondsRoundedUp + 1)),
        ("idle-timeout", guint(idleTimeout.secondsRoundedUp)),
    ]
    let names = uintProperties.map { strdup($0.0) } + [strdup("user-agent")]
    let values = UnsafeMutablePointer<GValue>.allocate(capacity: names.count)
    values.initialize(repeating: GValue(), count: names.count)
    for (index, property) in uintProperties.enumerated() {
        g_value_init(values + index, ecv_type_uint())
        g_value_set_uint(values + index, property.1)
    }
    g_value_init(values + uintProperties.count, ecv_type_string())
    g_value_set_string(values + uintProperties.count, userAgent)
    defer {
        for index in 0..<names.count { g_value_unset(values + index) }
        values.deallocate()
        names.forEach { free($0) }
    }
    let session = names.map { UnsafePointer($0) }.withUnsafeBufferPointer { namePointers in
        g_object_new_with_properties(soup_session_get_type(), guint(names.count),
                                     UnsafeMutablePointer(mutating: namePointers.baseAddress), values)
    }!
    if let authorities = policy.trustedAuthorities {
        soup_session_set_tls_database(UnsafeMutableRawPointer(session).assumingMemoryBound(to: SoupSession.self), authorities.database.typed(GTlsDatabase.self))
    }
    return OwnedGObject(adopting: UnsafeMutableRawPointer(session))
}
