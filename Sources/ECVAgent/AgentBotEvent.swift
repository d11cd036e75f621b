import ECVProtocol

/// What happens to a bot, in order.
public enum AgentBotEvent: Sendable {
    case state(AgentStateUpdate)
    case offered(CallOffer)
    case offerWithdrawn(rtcId: String, reason: OfferWithdrawnReason)
    /// A call was accepted and its media is being set up.
    case callStarted(AgentCall)
    case callEnded(rtcId: String, reason: CallEndReason)
    case error(String)
    /// The agent socket closed: the service has logged the bot out.
    case disconnected(code: UInt16, reason: String)
}

/// What happens in one call, from the agent's side.
public enum AgentCallEvent: Sendable, Equatable {
    case joinedRoom(initiator: Bool)
    case connected
    case disconnected
    /// The caller's media of `kind` arrived, in `codec` (its encoding name: "VP8", "OPUS").
    case remoteStream(kind: MediaKind, codec: String)
    case textChannelOpen
    /// The caller muted or unmuted (`STATUS|…`).
    case callerStatus(media: DataChannelCommand.MediaKind, muted: Bool)
    /// The caller's answer to a flash request.
    case flashReply(turningOn: Bool, approval: DataChannelCommand.FlashApproval)
    /// Any other text from the caller.
    case text(String)
    case transferPending(target: String)
    case transferCancelled(reason: String)
    case transferCompleted(newRtcId: String)
    /// The recording could not be finalised (the reason).
    case recordingFailed(String)
    /// Caller and bot share no codec of `kind` (`ours`: what the bot accepts, `theirs`: what the
    /// caller listed): the bot hangs up, and `ended(reason: "NO_COMMON_CODEC")` follows.
    case noCommonCodec(kind: MediaKind, ours: [String], theirs: [String])
    /// Media the negotiation agreed on has not flowed for 5 s while connected (`everCarried`
    /// false: not one packet so far). Once per negotiation.
    case mediaSilent(kind: MediaKind, direction: Flow, everCarried: Bool)
    /// Bandwidth adaptation changed what the agent sends to the caller.
    case bandwidthChanged(targetKbps: Int, estimateKbps: Int, reason: String)
    case ended(reason: CallEndReason)

    /// Which way media travels, seen from the bot.
    public enum Flow: String, Sendable, Hashable {
        case sent, received
    }
}
