import ECVProtocol

/// Why the ACD refused an operation. Each maps to the wire error code and HTTP status the service
/// answers with (docs/protocol.md §1.6).
public enum ACDError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A request field is missing or has a bad value; `field` is its path.
    case invalidField(field: String, reason: String)
    case invalidConfiguration(String)
    case unknownRtcId(String)
    case unknownQueue(String)
    case unknownAgent(String)
    case alreadyDialed(String)
    /// The operation does not fit the call's or agent's current state.
    case invalidState(String)
    /// A direct transfer target is not ready (or is the transferring agent).
    case targetUnavailable(agentId: String)
    case transferUnsupported
    /// The service stopped taking calls.
    case shuttingDown

    public var code: ServiceErrorCode {
        switch self {
        case .invalidField, .invalidConfiguration: .badRequest
        case .unknownRtcId: .unknownRtcId
        case .unknownQueue: .unknownQueue
        case .unknownAgent: .unknownAgent
        case .alreadyDialed: .alreadyDialed
        case .invalidState: .invalidState
        case .targetUnavailable: .targetUnavailable
        case .transferUnsupported: .transferUnsupported
        case .shuttingDown: .serviceUnavailable
        }
    }

    public var httpStatus: Int {
        switch self {
        case .invalidField, .invalidConfiguration: 400
        case .unknownRtcId, .unknownQueue, .unknownAgent: 404
        case .alreadyDialed, .invalidState, .targetUnavailable: 409
        case .transferUnsupported: 501
        case .shuttingDown: 503
        }
    }

    public var description: String {
        switch self {
        case .invalidField(let field, let reason): "invalid \(field): \(reason)"
        case .invalidConfiguration(let message): "invalid ACD configuration: \(message)"
        case .unknownRtcId(let rtcId): "unknown rtcId \"\(rtcId)\""
        case .unknownQueue(let queue): "unknown queue \"\(queue)\""
        case .unknownAgent(let agentId): "unknown agent \"\(agentId)\""
        case .alreadyDialed(let rtcId): "rtcId \"\(rtcId)\" was already dialed"
        case .invalidState(let message): message
        case .targetUnavailable(let agentId): "agent \"\(agentId)\" is not ready to take a transfer"
        case .transferUnsupported: "this service does not support call transfer"
        case .shuttingDown: "the service is shutting down"
        }
    }

    /// The error body the service sends.
    public var response: ServiceErrorResponse {
        if case .invalidField(let field, _) = self {
            return ServiceErrorResponse(code: code, message: description, field: field)
        }
        return ServiceErrorResponse(code: code, message: description)
    }
}
