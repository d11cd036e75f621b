import ECVProtocol
import Soup

/// The credential a request about a call presents (docs/protocol.md §1.9): the `X-ECV-Token`
/// header, else the `token` query parameter (for browsers, which cannot set headers on a
/// WebSocket or a link). Never logged.
func callCredential(of request: HTTPServerRequest) -> String? {
    if let header = request.headers[ECVAPI.callTokenHeader]?.trimmingCharacters(in: .whitespaces), !header.isEmpty {
        return header
    }
    if let query = request.queryValue(ECVAPI.tokenQueryName), !query.isEmpty { return query }
    return nil
}

extension HTTPServerResponse {
    /// `401`/`403` for a credential that may not act; nil when the request may proceed (granted,
    /// open, or an unknown call, which the endpoint answers in its own way).
    static func callRefusal(_ access: CallAccess, acting as: String) -> HTTPServerResponse? {
        switch access {
        case .open, .granted, .unknownCall:
            nil
        case .notDialed:
            .ecvError(401, ServiceErrorResponse(code: .unauthorized, message: "this rtcId was not dialed: it has no caller yet"))
        case .missingCredential:
            .ecvError(401, ServiceErrorResponse(code: .unauthorized, message: "this call needs its \(`as`) credential "
                + "(header \(ECVAPI.callTokenHeader) or query parameter \(ECVAPI.tokenQueryName))"))
        case .denied:
            .ecvError(403, ServiceErrorResponse(code: .forbidden, message: "the credential is not this call's \(`as`)"))
        }
    }
}
