import Foundation

/// `POST /api/GetRtcId` → a fresh call identifier, also the AppRTC room name.
public struct GetRtcIdResponse: Codable, Sendable, Equatable {
    public var rtcId: String

    public init(rtcId: String) { self.rtcId = rtcId }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        rtcId = try container.decodeNonEmptyString(forKey: .rtcId)
    }
}

/// `POST /api/DialEx`: every `DialCallParameters` field except `additionalHeaders`, which travel
/// as HTTP headers. Absent maps mean empty maps; an absent or null `queue` means the default queue.
public struct DialExRequest: Codable, Sendable, Equatable {
    public var rtcId: String
    public var callerName: String
    public var attributes: [String: String]
    public var queue: String?
    public var acdAttributes: [String: String]
    public var customPayload: [String: String]

    public init(rtcId: String, callerName: String, attributes: [String: String] = [:], queue: String? = nil,
                acdAttributes: [String: String] = [:], customPayload: [String: String] = [:]) {
        self.rtcId = rtcId
        self.callerName = callerName
        self.attributes = attributes
        self.queue = queue
        self.acdAttributes = acdAttributes
        self.customPayload = customPayload
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        rtcId = try container.decodeNonEmptyString(forKey: .rtcId)
        callerName = try container.decode(String.self, forKey: .callerName)
        attributes = try container.decodeStringMap(forKey: .attributes)
        queue = try container.decodeIfPresent(String.self, forKey: .queue)
        acdAttributes = try container.decodeStringMap(forKey: .acdAttributes)
        customPayload = try container.decodeStringMap(forKey: .customPayload)
    }
}

/// The DialEx success body. The SDK reports `interactionId` as the `DialSuccess` detail and keeps
/// the whole body as the call's raw dial response.
public struct DialExResponse: Codable, Sendable, Equatable {
    public var rtcId: String
    public var interactionId: String
    /// The queue the call was placed in (the default queue's name when the request had none).
    public var queue: String
    /// The effective routing priority the service derived from acdAttributes.
    public var priority: Int
    /// The call's caller credential (docs/protocol.md §1.9): the SDK presents it on every later
    /// request about this call. Absent when the backend issues none; the SDK then sends none.
    public var callerToken: String?

    public init(rtcId: String, interactionId: String, queue: String, priority: Int, callerToken: String? = nil) {
        self.rtcId = rtcId
        self.interactionId = interactionId
        self.queue = queue
        self.priority = priority
        self.callerToken = callerToken
    }
}

/// `POST /api/Hangup`: the caller ends the call in any phase.
public struct HangupRequest: Codable, Sendable, Equatable {
    public var rtcId: String
    /// Free text for the service log (the SDK sends its CallEnded reason, e.g. `LOCAL_HANGUP`).
    public var reason: String?

    public init(rtcId: String, reason: String? = nil) {
        self.rtcId = rtcId
        self.reason = reason
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        rtcId = try container.decodeNonEmptyString(forKey: .rtcId)
        reason = try container.decodeIfPresent(String.self, forKey: .reason)
    }
}

public struct HangupResponse: Codable, Sendable, Equatable {
    public var rtcId: String
    /// Always `ended`: hangup is idempotent while the service remembers the ended call.
    public var state: WaitState

    public init(rtcId: String, state: WaitState = .ended) {
        self.rtcId = rtcId
        self.state = state
    }
}

/// Why an interaction ended, as the service reports it. Open: other backends may send reasons this
/// list does not know, which the SDK passes on verbatim.
public struct CallEndReason: RawRepresentable, Codable, Sendable, Hashable, ExpressibleByStringLiteral,
    CustomStringConvertible
{
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { self.rawValue = value }
    public var description: String { rawValue }

    public init(from decoder: any Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(String.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }

    /// The caller hung up (`POST /api/Hangup`).
    public static let callerHangup: CallEndReason = "CALLER_HANGUP"
    /// The agent hung up.
    public static let agentHangup: CallEndReason = "AGENT_HANGUP"
    /// The agent's socket closed or the agent logged out during the call.
    public static let agentLost: CallEndReason = "AGENT_LOST"
    /// The caller vanished: no queue socket, no poll and no signaling socket for the service's
    /// caller-loss timeout (a killed process, a lost network).
    public static let callerLost: CallEndReason = "CALLER_LOST"
    /// The call waited longer than the service's maximum queue wait.
    public static let queueTimeout: CallEndReason = "QUEUE_TIMEOUT"
    /// The service is shutting down.
    public static let serviceShutdown: CallEndReason = "SERVICE_SHUTDOWN"

    // The ends a party reports (the seed's `CallEnded` details on the caller's side; the agent
    // bot's `ended(reason:)`), besides the service's above.

    /// This side hung up.
    public static let localHangup: CallEndReason = "LOCAL_HANGUP"
    /// The other side hung up (or the service ended the call for it).
    public static let remoteHangup: CallEndReason = "REMOTE_HANGUP"
    /// The media connection was lost for longer than the connection timeout.
    public static let peerDisconnected: CallEndReason = "PEER_DISCONNECTED"
    /// The media never connected within the connection timeout.
    public static let connectionTimeout: CallEndReason = "CONNECTION_TIMEOUT"
    /// The call moved to a new rtcId. Not a `CallEnded` detail: a transferred leg's last event is
    /// `TransferCompleted`; kept for code that compares end reasons.
    public static let transferred: CallEndReason = "TRANSFERRED"
    /// The caller left the room (`bye`) before the service said why (the agent's side).
    public static let callerLeft: CallEndReason = "CALLER_LEFT"
    /// The signaling socket could not be reopened within the window (the service is gone); the
    /// media ran on until then.
    public static let signalingLost: CallEndReason = "SIGNALING_FAILED"
    /// The two ends share no codec for a kind of media both wanted.
    public static let noCommonCodec: CallEndReason = "NO_COMMON_CODEC"
}

/// Machine-readable error codes in `ServiceErrorResponse` and agent-socket `error` events. Open,
/// like `CallEndReason`.
public struct ServiceErrorCode: RawRepresentable, Codable, Sendable, Hashable, ExpressibleByStringLiteral,
    CustomStringConvertible
{
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { self.rawValue = value }
    public var description: String { rawValue }

    public init(from decoder: any Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(String.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }

    public static let badRequest: ServiceErrorCode = "BAD_REQUEST"
    public static let unauthorized: ServiceErrorCode = "UNAUTHORIZED"
    /// A valid credential, but not one of this call's (or this room slot's) parties.
    public static let forbidden: ServiceErrorCode = "FORBIDDEN"
    public static let unknownRtcId: ServiceErrorCode = "UNKNOWN_RTC_ID"
    public static let unknownQueue: ServiceErrorCode = "UNKNOWN_QUEUE"
    public static let unknownAgent: ServiceErrorCode = "UNKNOWN_AGENT"
    public static let alreadyDialed: ServiceErrorCode = "ALREADY_DIALED"
    public static let invalidState: ServiceErrorCode = "INVALID_STATE"
    public static let targetUnavailable: ServiceErrorCode = "TARGET_UNAVAILABLE"
    public static let transferUnsupported: ServiceErrorCode = "TRANSFER_UNSUPPORTED"
    public static let serviceFailure: ServiceErrorCode = "SERVICE_FAILURE"
    public static let serviceUnavailable: ServiceErrorCode = "SERVICE_UNAVAILABLE"
}

/// The body of every non-2xx ECV REST answer.
public struct ServiceErrorResponse: Codable, Sendable, Equatable, Error {
    public var code: ServiceErrorCode
    public var message: String
    /// For `BAD_REQUEST`: the path of the request field at fault.
    public var field: String?

    public init(code: ServiceErrorCode, message: String, field: String? = nil) {
        self.code = code
        self.message = message
        self.field = field
    }
}

/// `GET /api/Queues`: what the service's ACD looks like now (for agent bots, the CLI's doctor and
/// tests; the caller SDK never needs it).
public struct QueuesResponse: Codable, Sendable, Equatable {
    public var defaultQueue: String
    public var queues: [QueueSummary]

    public init(defaultQueue: String, queues: [QueueSummary]) {
        self.defaultQueue = defaultQueue
        self.queues = queues
    }
}

public struct QueueSummary: Codable, Sendable, Equatable {
    public var name: String
    /// Interactions waiting in the queue (not yet offered).
    public var waiting: Int
    /// Agents ready on the queue and idle.
    public var readyAgents: Int
    /// Agents working the queue: ready, ringing, busy or in after-call work.
    public var staffedAgents: Int
    /// Mean handle time of the queue's recent calls; absent when the service has none.
    public var averageHandleSeconds: Double?

    public init(name: String, waiting: Int, readyAgents: Int, staffedAgents: Int, averageHandleSeconds: Double?) {
        self.name = name
        self.waiting = waiting
        self.readyAgents = readyAgents
        self.staffedAgents = staffedAgents
        self.averageHandleSeconds = averageHandleSeconds
    }
}
