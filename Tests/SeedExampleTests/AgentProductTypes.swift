import ECVAgent
import Testing

// Every wire-protocol type the agent bot's API names, written by name in a file that imports the
// ECVAgent product alone: this file compiles only while ECVAgent re-exports each of them.

/// An acceptance policy and a script of commands as an app writes them.
func agentAppNamesItsTypes(bot: AgentBot, call: AgentCall) async throws {
    let policy: @Sendable (CallOffer) -> Bool = { offer in !offer.rtcId.isEmpty }
    _ = policy
    let commands: [DataChannelCommand] = [.hold(rtcId: call.rtcId), .pickup(rtcId: call.rtcId), .takePhotoOn]
    for command in commands { try call.send(command) }
    let step: VerificationCommand.VerificationStep? = nil
    _ = step
    let target: TransferTarget? = nil
    _ = target
    let state: AgentStateUpdate? = bot.lastState
    _ = state
    for await event in call.events() {
        if case .ended(let reason) = event, reason == CallEndReason.callerLeft || reason == .agentHangup { break }
    }
}

/// The typed end reasons keep the seed's and the service's strings on the wire and in `CallEnded`.
@Test func endReasonsKeepTheirWireStrings() {
    let reasons: [CallEndReason: String] = [
        .callerLeft: "CALLER_LEFT", .signalingLost: "SIGNALING_FAILED", .noCommonCodec: "NO_COMMON_CODEC", .agentHangup: "AGENT_HANGUP",
        .localHangup: "LOCAL_HANGUP", .remoteHangup: "REMOTE_HANGUP", .peerDisconnected: "PEER_DISCONNECTED",
        .connectionTimeout: "CONNECTION_TIMEOUT", .transferred: "TRANSFERRED",
    ]
    for (reason, wire) in reasons { #expect(reason.rawValue == wire) }
    #expect(AgentCall.callerLeft == .callerLeft && AgentCall.signalingLost == .signalingLost)
}
