/// Which failures may pass if the request is made again (docs/protocol.md §9).
extension HTTPError {
    /// The request surely never reached the server (nothing listened, or the connection was never
    /// made): repeating it is safe even for a request that must not be done twice.
    public var neverReachedServer: Bool {
        switch self {
        case .connectionRefused, .connectTimeout: true
        case .webSocketRejected(_, let status, _): status == 0
        default: false
        }
    }

    /// Trying again later may succeed: the server was unreachable, silent, reset the connection,
    /// or a proxy in front of it answered an upgrade with 502/503/504. A bad URL, a TLS or pin
    /// failure, a cancellation or an oversized answer stay what they are.
    public var isTransient: Bool {
        switch self {
        case .connectionRefused, .connectTimeout, .readTimeout, .network: true
        case .webSocketRejected(_, let status, _): [0, 502, 503, 504].contains(status)
        case .invalidURL, .invalidRequest, .hostNotFound, .tlsFailure, .certificateNotPinned, .cleartextRefused, .cancelled,
             .responseTooLarge, .json:
            false
        }
    }
}
