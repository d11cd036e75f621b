import Foundation

// The frames of the agent socket (`/agent/socket`, docs/protocol.md §3.3–§3.4).

/// Why an offer disappeared before the agent answered it.
public enum OfferWithdrawnReason: String, WireEnum {
    /// The agent did not answer in time; the service also set it not ready.
    case timeout = "TIMEOUT"
    /// The caller hung up.
    case callerHangup = "CALLER_HANGUP"
    /// The transferring agent cancelled the transfer, hung up, or left.
    case cancelled = "CANCELLED"
}

/// Commands an agent sends on its socket.
public enum AgentCommand: Sendable, Hashable {
    /// Become ready on these queues (empty: the service's default queue).
    case ready(queues: [String])
    case notReady
    case accept(rtcId: String)
    case reject(rtcId: String)
    case hangup(rtcId: String)
    case transfer(rtcId: String, target: TransferTarget)
    case cancelTransfer(rtcId: String)

    public enum Kind: String, WireEnum {
        case ready
        case notReady = "not_ready"
        case accept, reject, hangup, transfer
        case cancelTransfer = "cancel_transfer"
    }

    public var kind: Kind {
        switch self {
        case .ready: .ready
        case .notReady: .notReady
        case .accept: .accept
        case .reject: .reject
        case .hangup: .hangup
        case .transfer: .transfer
        case .cancelTransfer: .cancelTransfer
        }
    }
}

/// One frame from the agent: a command and an optional `requestId` the service echoes in the
/// `ack` or `error` answering it.
public struct AgentRequest: Codable, Sendable, Hashable {
    public var requestId: String?
    public var command: AgentCommand

    public init(_ command: AgentCommand, requestId: String? = nil) {
        self.command = command
        self.requestId = requestId
    }

    private enum CodingKeys: String, CodingKey { case type, requestId, queues, rtcId, target }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        requestId = try container.decodeIfPresent(String.self, forKey: .requestId)
        switch try container.decode(AgentCommand.Kind.self, forKey: .type) {
        case .ready: command = .ready(queues: try container.decodeIfPresent([String].self, forKey: .queues) ?? [])
        case .notReady: command = .notReady
        case .accept: command = .accept(rtcId: try container.decodeNonEmptyString(forKey: .rtcId))
        case .reject: command = .reject(rtcId: try container.decodeNonEmptyString(forKey: .rtcId))
        case .hangup: command = .hangup(rtcId: try container.decodeNonEmptyString(forKey: .rtcId))
        case .transfer:
            command = .transfer(rtcId: try container.decodeNonEmptyString(forKey: .rtcId),
                                target: try container.decode(TransferTarget.self, forKey: .target))
        case .cancelTransfer: command = .cancelTransfer(rtcId: try container.decodeNonEmptyString(forKey: .rtcId))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(command.kind, forKey: .type)
        try container.encodeIfPresent(requestId, forKey: .requestId)
        switch command {
        case .ready(let queues): try container.encode(queues, forKey: .queues)
        case .notReady: break
        case .accept(let rtcId), .reject(let rtcId), .hangup(let rtcId), .cancelTransfer(let rtcId):
            try container.encode(rtcId, forKey: .rtcId)
        case .transfer(let rtcId, let target):
            try container.encode(rtcId, forKey: .rtcId)
            try container.encode(target, forKey: .target)
        }
    }
}

/// Everything the service pushes on an agent socket.
public enum AgentEvent: Codable, Sendable, Hashable {
    case agentState(AgentStateUpdate)
    case offer(CallOffer)
    case offerWithdrawn(rtcId: String, reason: OfferWithdrawnReason)
    /// The accept took effect: join the room `rtcId` (the caller got `agent_connected`).
    case callConnected(rtcId: String, callerName: String)
    /// The call is over (the caller hung up, the agent's own hangup, or the service ended it).
    case callEnded(rtcId: String, reason: CallEndReason)
    case transferPending(rtcId: String, target: TransferTarget)
    case transferCancelled(rtcId: String, reason: TransferCancelReason)
    /// The transfer this agent started succeeded; its leg of the call is over.
    case transferCompleted(rtcId: String, newRtcId: String)
    case ack(requestId: String)
    case error(requestId: String?, code: ServiceErrorCode, message: String)

    public enum Kind: String, WireEnum {
        case agentState = "agent_state"
        case offer
        case offerWithdrawn = "offer_withdrawn"
        case callConnected = "call_connected"
        case callEnded = "call_ended"
        case transferPending = "transfer_pending"
        case transferCancelled = "transfer_cancelled"
        case transferCompleted = "transfer_completed"
        case ack, error
    }

    public var kind: Kind {
        switch self {
        case .agentState: .agentState
        case .offer: .offer
        case .offerWithdrawn: .offerWithdrawn
        case .callConnected: .callConnected
        case .callEnded: .callEnded
        case .transferPending: .transferPending
        case .transferCancelled: .transferCancelled
        case .transferCompleted: .transferCompleted
        case .ack: .ack
        case .error: .error
        }
    }

    private enum CodingKeys: String, CodingKey {
        case type, rtcId, reason, callerName, target, newRtcId, requestId, code, message
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        switch try container.decode(Kind.self, forKey: .type) {
        case .agentState: self = .agentState(try AgentStateUpdate(from: decoder))
        case .offer: self = .offer(try CallOffer(from: decoder))
        case .offerWithdrawn:
            self = .offerWithdrawn(rtcId: try container.decodeNonEmptyString(forKey: .rtcId),
                                   reason: try container.decode(OfferWithdrawnReason.self, forKey: .reason))
        case .callConnected:
            self = .callConnected(rtcId: try container.decodeNonEmptyString(forKey: .rtcId),
                                  callerName: try container.decode(String.self, forKey: .callerName))
        case .callEnded:
            self = .callEnded(rtcId: try container.decodeNonEmptyString(forKey: .rtcId),
                              reason: try container.decode(CallEndReason.self, forKey: .reason))
        case .transferPending:
            self = .transferPending(rtcId: try container.decodeNonEmptyString(forKey: .rtcId),
                                    target: try container.decode(TransferTarget.self, forKey: .target))
        case .transferCancelled:
            self = .transferCancelled(rtcId: try container.decodeNonEmptyString(forKey: .rtcId),
                                      reason: try container.decode(TransferCancelReason.self, forKey: .reason))
        case .transferCompleted:
            self = .transferCompleted(rtcId: try container.decodeNonEmptyString(forKey: .rtcId),
                                      newRtcId: try container.decodeNonEmptyString(forKey: .newRtcId))
        case .ack:
            self = .ack(requestId: try container.decode(String.self, forKey: .requestId))
        case .error:
            self = .error(requestId: try container.decodeIfPresent(String.self, forKey: .requestId),
                          code: try container.decode(ServiceErrorCode.self, forKey: .code),
                          message: try container.decode(String.self, forKey: .message))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        // The payload structs write their fields into the same JSON object as `type`.
        switch self {
        case .agentState(let update): try update.encode(to: encoder)
        case .offer(let offer): try offer.encode(to: encoder)
        default: break
        }
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(kind, forKey: .type)
        switch self {
        case .agentState, .offer:
            break
        case .offerWithdrawn(let rtcId, let reason):
            try container.encode(rtcId, forKey: .rtcId)
            try container.encode(reason, forKey: .reason)
        case .callConnected(let rtcId, let callerName):
            try container.encode(rtcId, forKey: .rtcId)
            try container.encode(callerName, forKey: .callerName)
        case .callEnded(let rtcId, let reason):
            try container.encode(rtcId, forKey: .rtcId)
            try container.encode(reason, forKey: .reason)
        case .transferPending(let rtcId, let target):
            try container.encode(rtcId, forKey: .rtcId)
            try container.encode(target, forKey: .target)
        case .transferCancelled(let rtcId, let reason):
            try container.encode(rtcId, forKey: .rtcId)
            try container.encode(reason, forKey: .reason)
        case .transferCompleted(let rtcId, let newRtcId):
            try container.encode(rtcId, forKey: .rtcId)
            try container.encode(newRtcId, forKey: .newRtcId)
        case .ack(let requestId):
            try container.encode(requestId, forKey: .requestId)
        case .error(let requestId, let code, let message):
            try container.encodeIfPresent(requestId, forKey: .requestId)
            try container.encode(code, forKey: .code)
            try container.encode(message, forKey: .message)
        }
    }
}
