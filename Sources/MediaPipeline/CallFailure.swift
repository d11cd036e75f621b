/// Why a call, or one of its steps, failed: one typed cause below the products. Each product's
/// own error carries it as `cause` where the call itself failed (ECV's `ErrorObject` and
/// `ECVError`, ECVAgent's `AgentBotError`, ECVPeer's `PeerError`), so an app that uses two
/// products reads one type, while each product keeps its own names (the seed's `ErrorName`,
/// PeerJS's error kinds).
public enum CallFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// The signaling to the far end failed at `step`.
    case signaling(step: SignalingStep, String)
    /// No ICE server was configured or handed out, and the call needs one.
    case noICEServers
    /// Relay-only without a TURN server among the ICE servers: no candidate could ever connect.
    case relayWithoutTURN
    /// The parameters ask for media this machine cannot build (a codec, a size, an element).
    case unsupportedMedia(String)
    /// The peer connection or its media failed: set-up, negotiation, the media graph.
    case webrtc(String)
    /// A recording could not start, be written or be finalised.
    case recording(String)

    /// The signaling's steps: joining the room (or the peer's server), connecting its socket.
    public enum SignalingStep: String, Sendable, Hashable { case join, connect }

    public var description: String {
        switch self {
        case .signaling(let step, let reason): "signaling (\(step.rawValue)): \(reason)"
        case .noICEServers: "no ICE servers: none are configured and none were handed out"
        case .relayWithoutTURN: "the ICE transport policy is relay, but no TURN server is configured or handed out"
        case .unsupportedMedia(let reason): "unsupported media: \(reason)"
        case .webrtc(let reason): "WebRTC: \(reason)"
        case .recording(let reason): "recording: \(reason)"
        }
    }
}
