import Foundation

/// `POST /agent/api/Login`.
public struct AgentLoginRequest: Codable, Sendable, Equatable {
    /// Shown to callers as the agent's name (`agent_connected.agentName`).
    public var name: String
    /// Required only when the service is configured with an agent secret.
    public var secret: String?
    /// The agent serves customers with hearing or visual impairment first (EnQualify's
    /// accessibility routing, §3.7); absent means false.
    public var servesAccessibility: Bool?

    public init(name: String, secret: String? = nil, servesAccessibility: Bool? = nil) {
        self.name = name
        self.secret = secret
        self.servesAccessibility = servesAccessibility
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        name = try container.decodeNonEmptyString(forKey: .name)
        secret = try container.decodeIfPresent(String.self, forKey: .secret)
        servesAccessibility = try container.decodeIfPresent(Bool.self, forKey: .servesAccessibility)
    }
}

public struct AgentLoginResponse: Codable, Sendable, Equatable {
    public var agentId: String
    /// Opens the agent socket (`token` query) and authorizes Logout (`Authorization: Bearer`).
    public var token: String

    public init(agentId: String, token: String) {
        self.agentId = agentId
        self.token = token
    }
}

/// `POST /agent/api/Logout` (no body; the agent is named by its bearer token).
public struct AgentLogoutResponse: Codable, Sendable, Equatable {
    public var agentId: String

    public init(agentId: String) { self.agentId = agentId }
}

/// The agent's own state as the service sees it.
public enum AgentStatus: String, WireEnum {
    /// Logged in, not taking calls.
    case notReady = "not_ready"
    /// Idle and available on its queues.
    case ready
    /// A call (or a transfer) is offered and awaits accept/reject.
    case ringing
    /// In a call.
    case busy
    /// Wrap-up after a call; back to ready when it ends.
    case afterCall = "after_call"
}

/// Where a transfer offer comes from: the agent handing the call over and the caller's current rtcId.
public struct TransferOrigin: Codable, Sendable, Hashable {
    public var fromAgentId: String
    public var fromRtcId: String

    public init(fromAgentId: String, fromRtcId: String) {
        self.fromAgentId = fromAgentId
        self.fromRtcId = fromRtcId
    }
}

/// A call offered to an agent: everything the caller dialed with, for the agent's screen.
public struct CallOffer: Codable, Sendable, Hashable {
    /// The room to join after accepting. For a transfer offer this is the *new* rtcId.
    public var rtcId: String
    public var interactionId: String
    public var callerName: String
    public var queue: String
    /// The caller's attached data.
    public var attributes: [String: String]
    public var acdAttributes: [String: String]
    public var customPayload: [String: String]
    public var priority: Int
    /// Seconds before the offer is withdrawn and re-routed.
    public var timeoutSeconds: Double
    /// Present when another agent is transferring the call directly to this one.
    public var transfer: TransferOrigin?

    public init(rtcId: String, interactionId: String, callerName: String, queue: String,
                attributes: [String: String] = [:], acdAttributes: [String: String] = [:],
                customPayload: [String: String] = [:], priority: Int = 0, timeoutSeconds: Double,
                transfer: TransferOrigin? = nil) {
        self.rtcId = rtcId
        self.interactionId = interactionId
        self.callerName = callerName
        self.queue = queue
        self.attributes = attributes
        self.acdAttributes = acdAttributes
        self.customPayload = customPayload
        self.priority = priority
        self.timeoutSeconds = timeoutSeconds
        self.transfer = transfer
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        rtcId = try container.decodeNonEmptyString(forKey: .rtcId)
        interactionId = try container.decode(String.self, forKey: .interactionId)
        callerName = try container.decode(String.self, forKey: .callerName)
        queue = try container.decode(String.self, forKey: .queue)
        attributes = try container.decodeStringMap(forKey: .attributes)
        acdAttributes = try container.decodeStringMap(forKey: .acdAttributes)
        customPayload = try container.decodeStringMap(forKey: .customPayload)
        priority = try container.decode(Int.self, forKey: .priority)
        timeoutSeconds = try container.decode(Double.self, forKey: .timeoutSeconds)
        transfer = try container.decodeIfPresent(TransferOrigin.self, forKey: .transfer)
    }
}

/// The `agent_state` push: sent when the agent socket opens and after every change of the agent's state.
public struct AgentStateUpdate: Codable, Sendable, Hashable {
    public var agentId: String
    public var state: AgentStatus
    /// The queues the agent works when ready (sorted).
    public var queues: [String]
    /// The call the agent is ringing for or busy with.
    public var rtcId: String?
    /// Why the service changed the state itself, e.g. `NO_ANSWER` when an unanswered offer set the
    /// agent not ready.
    public var reason: String?

    public init(agentId: String, state: AgentStatus, queues: [String], rtcId: String? = nil, reason: String? = nil) {
        self.agentId = agentId
        self.state = state
        self.queues = queues
        self.rtcId = rtcId
        self.reason = reason
    }
}
