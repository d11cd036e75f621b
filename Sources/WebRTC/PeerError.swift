/// Why a peer connection could not do what was asked.
public enum PeerError: Error, Sendable, Equatable, CustomStringConvertible {
    case setup(String)
    case media(String)
    case negotiation(String)
    case invalidRemoteDescription(String)
    case closed

    public var description: String {
        switch self {
        case .setup(let message): "peer connection setup failed: \(message)"
        case .media(let message): "media: \(message)"
        case .negotiation(let message): "negotiation failed: \(message)"
        case .invalidRemoteDescription(let message): "invalid remote description: \(message)"
        case .closed: "the peer connection is closed"
        }
    }
}
