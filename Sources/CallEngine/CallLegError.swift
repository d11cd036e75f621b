import WebRTC
import MediaPipeline

/// Why a call leg could not be set up, by the step that failed. A signaling adapter's own
/// failures travel as `signaling`, with the adapter's error and what the products name it.
package enum CallLegError: Error, Sendable, CustomStringConvertible {
    /// The signaling could not reach the other side (`step`: which of its steps failed).
    case signaling(step: SignalingStep, String)
    case noICEServers
    /// Relay-only without a TURN server among the ICE servers: no candidate could ever connect.
    case relayWithoutTURN
    case peer(PeerError)

    /// The signaling's steps, for the products' error names.
    package enum SignalingStep: Sendable { case join, connect }

    /// The products' shared cause for it.
    package var failure: CallFailure {
        switch self {
        case .signaling(let step, let reason): .signaling(step: step == .join ? .join : .connect, reason)
        case .noICEServers: .noICEServers
        case .relayWithoutTURN: .relayWithoutTURN
        case .peer(.unsupported(let reason)): .unsupportedMedia(reason.description)
        case .peer(let error): .webrtc(error.description)
        }
    }

    package var description: String {
        switch self {
        case .signaling(_, let reason): reason
        case .noICEServers: "the join answer has no ICE servers and none are configured"
        case .relayWithoutTURN: "the ICE transport policy is relay, but no TURN server is configured or in the join answer"
        case .peer(let error): error.description
        }
    }
}
