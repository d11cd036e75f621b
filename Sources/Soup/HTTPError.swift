internal import CSoup

/// Why an HTTP request or a WebSocket connection attempt failed. Every case names the URL.
///
/// A response with a non-2xx status is not an error: `HTTPClient.send` returns it.
public enum HTTPError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The URL does not parse, or is not http(s) / ws(s), or has no host.
    case invalidURL(String, reason: String)
    /// The method or a header cannot be sent as given.
    case invalidRequest(url: String, reason: String)
    /// Nothing listens at the address (TCP RST).
    case connectionRefused(url: String)
    /// The host name did not resolve.
    case hostNotFound(url: String, message: String)
    /// Resolving, connecting and the TLS handshake did not finish within the connect timeout.
    case connectTimeout(url: String, after: Duration)
    /// The peer went silent for longer than the read timeout while we waited for (or sent) data.
    case readTimeout(url: String, after: Duration)
    /// The TLS handshake failed or the certificate was not trusted.
    case tlsFailure(url: String, message: String)
    /// The server's certificate is not one of the pinned certificates.
    case certificateNotPinned(url: String, fingerprint: String)
    /// A client with pins or a private CA was given a cleartext `http`/`ws` URL: nothing is sent.
    case cleartextRefused(url: String)
    /// The request was cancelled (task cancellation or an explicit cancel).
    case cancelled(url: String)
    /// The response body exceeded the client's limit.
    case responseTooLarge(url: String, limit: Int)
    /// The server refused the WebSocket upgrade (status 0 when no HTTP response arrived).
    case webSocketRejected(url: String, status: Int, message: String)
    /// A body could not be encoded or decoded as JSON.
    case json(url: String, message: String)
    /// Any other network failure, with libsoup/GIO's message.
    case network(url: String, message: String)

    public var url: String {
        switch self {
        case .invalidURL(let url, _): url
        case .invalidRequest(let url, _), .connectionRefused(let url), .hostNotFound(let url, _),
             .connectTimeout(let url, _), .readTimeout(let url, _), .tlsFailure(let url, _),
             .certificateNotPinned(let url, _), .cleartextRefused(let url), .cancelled(let url), .responseTooLarge(let url, _),
             .webSocketRejected(let url, _, _), .json(let url, _), .network(let url, _):
            url
        }
    }

    public var description: String {
        switch self {
        case .invalidURL(let url, let reason): "invalid URL \"\(url)\": \(reason)"
        case .invalidRequest(let url, let reason): "invalid request to \(url): \(reason)"
        case .connectionRefused(let url): "connection refused by \(url)"
        case .hostNotFound(let url, let message): "host of \(url) not found: \(message)"
        case .connectTimeout(let url, let after): "connecting to \(url) timed out after \(after)"
        case .readTimeout(let url, let after): "no data from \(url) for \(after) (read timeout)"
        case .tlsFailure(let url, let message): "TLS failure with \(url): \(message)"
        case .certificateNotPinned(let url, let fingerprint):
            "certificate of \(url) (SHA-256 \(fingerprint)) matches none of the pinned certificates"
        case .cleartextRefused(let url):
            "refusing cleartext \(url): certificate pins or a CA file are set, so only https:// and wss:// are used"
        case .cancelled(let url): "request to \(url) cancelled"
        case .responseTooLarge(let url, let limit): "response from \(url) exceeds \(limit) bytes"
        case .webSocketRejected(let url, let status, let message):
            "WebSocket upgrade to \(url) rejected (HTTP \(status)): \(message)"
        case .json(let url, let message): "JSON body for \(url): \(message)"
        case .network(let url, let message): "network failure with \(url): \(message)"
        }
    }

    /// Maps a GIO/libsoup error raised while talking to `url`; `connecting` says whether the
    /// connect phase was still running, which decides what a GIO timeout means.
    static func from(_ error: GLibError, url: String, connecting: Bool,
                     connectTimeout: Duration, readTimeout: Duration) -> HTTPError {
        let io = g_io_error_quark()
        if error.domain == io {
            switch GIOErrorEnum(rawValue: UInt32(error.code)) {
            case G_IO_ERROR_CONNECTION_REFUSED: return .connectionRefused(url: url)
            case G_IO_ERROR_CANCELLED: return .cancelled(url: url)
            case G_IO_ERROR_TIMED_OUT:
                return connecting ? .connectTimeout(url: url, after: connectTimeout) : .readTimeout(url: url, after: readTimeout)
            case G_IO_ERROR_HOST_NOT_FOUND: return .hostNotFound(url: url, message: error.message)
            default: break
            }
        }
        if error.domain == g_resolver_error_quark() { return .hostNotFound(url: url, message: error.message) }
        if error.domain == g_tls_error_quark() { return .tlsFailure(url: url, message: error.message) }
        return .network(url: url, message: error.message)
    }
}
