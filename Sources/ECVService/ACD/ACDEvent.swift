import ECVProtocol

/// What the engine tells the outside world, already addressed and in wire form: the server only
/// forwards each to the right socket (or drops it when that socket is not open: the greeting on
/// open carries the current state).
public enum ACDEvent: Sendable, Hashable {
    /// Push on the queue socket of `rtcId`.
    case toCaller(rtcId: String, QueueSocketMessage)
    /// Push on the agent's socket.
    case toAgent(agentId: String, AgentEvent)
    /// The call behind this room is over: deliver `bye` to registered clients and delete the room.
    case roomClosed(rtcId: String)
}
