import ECVProtocol

/// A read-only picture of the engine for tests, the CLI's doctor and scripted service hooks.
public struct ACDSnapshot: Sendable, Equatable {
    /// Live calls in dial order.
    public var interactions: [InteractionSnapshot]
    /// Logged-in agents in login order.
    public var agents: [AgentSnapshot]
    /// Ended calls whose outcome is still remembered.
    public var rememberedEndedCalls: Int
    /// rtcIds handed out and not yet dialed.
    public var undialedRtcIds: Int
    /// Direct transfers waiting for the target's answer.
    public var pendingTransfers: Int

    /// True when the engine holds nothing at all: the state every scenario should end in once
    /// agents log out and retention expires.
    public var isEmpty: Bool {
        interactions.isEmpty && agents.isEmpty && rememberedEndedCalls == 0 && undialedRtcIds == 0
            && pendingTransfers == 0
    }
}

public struct InteractionSnapshot: Sendable, Equatable {
    public enum Phase: Sendable, Equatable {
        case entering
        case queued
        case offered(agentId: String)
        case connected(agentId: String)
    }

    public var rtcId: String
    public var interactionId: String
    public var callerName: String
    public var queue: String
    public var priority: Int
    public var phase: Phase
    public var attributes: [String: String]
    public var acdAttributes: [String: String]
    public var customPayload: [String: String]
    /// The target of a pending direct transfer.
    public var transferTarget: String?
}

public struct AgentSnapshot: Sendable, Equatable {
    public var agentId: String
    public var name: String
    public var state: AgentStatus
    public var queues: [String]
    public var rtcId: String?
}

extension ACDState {
    func snapshot() -> ACDSnapshot {
        ACDSnapshot(
            interactions: interactions.values.sorted { $0.sequence < $1.sequence }.map { record in
                let phase: InteractionSnapshot.Phase = switch record.phase {
                case .entering: .entering
                case .queued: .queued
                case .offered(let agentId, _): .offered(agentId: agentId)
                case .connected(let agentId, _): .connected(agentId: agentId)
                }
                return InteractionSnapshot(
                    rtcId: record.rtcId, interactionId: record.interactionId, callerName: record.callerName,
                    queue: record.queue, priority: record.priority, phase: phase, attributes: record.attributes,
                    acdAttributes: record.acdAttributes, customPayload: record.customPayload,
                    transferTarget: record.transfer?.targetAgentId)
            },
            agents: agents.values.sorted { $0.sequence < $1.sequence }.map { agent in
                let update = agent.stateUpdate
                return AgentSnapshot(agentId: agent.id, name: agent.name, state: update.state,
                                     queues: update.queues, rtcId: update.rtcId)
            },
            rememberedEndedCalls: ended.count,
            undialedRtcIds: issued.count,
            pendingTransfers: transferLegs.count)
    }
}
