import Foundation

/// Where an agent sends a call: a named queue, or one agent directly.
/// Wire form: `{"queue":"Billing"}` or `{"agentId":"agent-2"}` (exactly one key).
public enum TransferTarget: Codable, Sendable, Hashable {
    case queue(String)
    case agent(String)

    private enum CodingKeys: String, CodingKey { case queue, agentId }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let queue = try container.decodeIfPresent(String.self, forKey: .queue)
        let agentId = try container.decodeIfPresent(String.self, forKey: .agentId)
        switch (queue, agentId) {
        case (let queue?, nil): self = .queue(queue)
        case (nil, let agentId?): self = .agent(agentId)
        default:
            throw DecodingError.dataCorrupted(.init(
                codingPath: container.codingPath,
                debugDescription: "a transfer target has exactly one of \"queue\" or \"agentId\""))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .queue(let queue): try container.encode(queue, forKey: .queue)
        case .agent(let agentId): try container.encode(agentId, forKey: .agentId)
        }
    }
}

/// Why a pending transfer did not happen. The call goes on with the transferring agent.
public enum TransferCancelReason: String, WireEnum {
    /// The target agent rejected the transfer offer.
    case refused = "REFUSED"
    /// The transferring agent cancelled it (or hung up while it was pending).
    case cancelled = "CANCELLED"
    /// The target agent did not answer within the offer timeout.
    case timeout = "TIMEOUT"
    /// The target agent logged out or lost its socket.
    case targetLost = "TARGET_LOST"
}

/// Everything the queue socket (`/api/QueueSocket?rtcId=`, v1.75+) pushes to the caller.
/// Each is one text frame holding one JSON object with a `type` discriminator.
public enum QueueSocketMessage: Codable, Sendable, Hashable {
    /// Snapshot on open only: the call is entering the queue, queued, or ringing at an agent.
    case waiting(rtcId: String, queue: String)
    /// An agent accepted: the caller joins the room named `rtcId`.
    case agentConnected(rtcId: String, agentId: String, agentName: String)
    case transferPending(rtcId: String, target: TransferTarget)
    case transferCancelled(rtcId: String, reason: TransferCancelReason)
    /// Terminal for this socket: the caller waits again on a queue socket for `newRtcId`, without dialing.
    case transferCompleted(rtcId: String, newRtcId: String)
    /// Terminal.
    case callEnded(rtcId: String, reason: CallEndReason)
    /// Terminal: the socket could not be attached to a call.
    case error(code: ServiceErrorCode, message: String)

    public enum Kind: String, WireEnum {
        case waiting
        case agentConnected = "agent_connected"
        case transferPending = "transfer_pending"
        case transferCancelled = "transfer_cancelled"
        case transferCompleted = "transfer_completed"
        case callEnded = "call_ended"
        case error
    }

    public var kind: Kind {
        switch self {
        case .waiting: .waiting
        case .agentConnected: .agentConnected
        case .transferPending: .transferPending
        case .transferCancelled: .transferCancelled
        case .transferCompleted: .transferCompleted
        case .callEnded: .callEnded
        case .error: .error
        }
    }

    /// After a terminal message the server closes the socket with 1000; any other close is the
    /// SDK's `QUEUE_SOCKET_CLOSED`.
    public var isTerminal: Bool {
        switch self {
        case .transferCompleted, .callEnded, .error: true
        default: false
        }
    }

    private enum CodingKeys: String, CodingKey {
        case type, rtcId, queue, agentId, agentName, target, reason, newRtcId, code, message
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        switch try container.decode(Kind.self, forKey: .type) {
        case .waiting:
            self = .waiting(rtcId: try container.decodeNonEmptyString(forKey: .rtcId),
                            queue: try container.decode(String.self, forKey: .queue))
        case .agentConnected:
            self = .agentConnected(rtcId: try container.decodeNonEmptyString(forKey: .rtcId),
                                   agentId: try container.decode(String.self, forKey: .agentId),
                                   agentName: try container.decode(String.self, forKey: .agentName))
        case .transferPending:
            self = .transferPending(rtcId: try container.decodeNonEmptyString(forKey: .rtcId),
                                    target: try container.decode(TransferTarget.self, forKey: .target))
        case .transferCancelled:
            self = .transferCancelled(rtcId: try container.decodeNonEmptyString(forKey: .rtcId),
                                      reason: try container.decode(TransferCancelReason.self, forKey: .reason))
        case .transferCompleted:
            self = .transferCompleted(rtcId: try container.decodeNonEmptyString(forKey: .rtcId),
                                      newRtcId: try container.decodeNonEmptyString(forKey: .newRtcId))
        case .callEnded:
            self = .callEnded(rtcId: try container.decodeNonEmptyString(forKey: .rtcId),
                              reason: try container.decode(CallEndReason.self, forKey: .reason))
        case .error:
            self = .error(code: try container.decode(ServiceErrorCode.self, forKey: .code),
                          message: try container.decode(String.self, forKey: .message))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(kind, forKey: .type)
        switch self {
        case .waiting(let rtcId, let queue):
            try container.encode(rtcId, forKey: .rtcId)
            try container.encode(queue, forKey: .queue)
        case .agentConnected(let rtcId, let agentId, let agentName):
            try container.encode(rtcId, forKey: .rtcId)
            try container.encode(agentId, forKey: .agentId)
            try container.encode(agentName, forKey: .agentName)
        case .transferPending(let rtcId, let target):
            try container.encode(rtcId, forKey: .rtcId)
            try container.encode(target, forKey: .target)
        case .transferCancelled(let rtcId, let reason):
            try container.encode(rtcId, forKey: .rtcId)
            try container.encode(reason, forKey: .reason)
        case .transferCompleted(let rtcId, let newRtcId):
            try container.encode(rtcId, forKey: .rtcId)
            try container.encode(newRtcId, forKey: .newRtcId)
        case .callEnded(let rtcId, let reason):
            try container.encode(rtcId, forKey: .rtcId)
            try container.encode(reason, forKey: .reason)
        case .error(let code, let message):
            try container.encode(code, forKey: .code)
            try container.encode(message, forKey: .message)
        }
    }
}
