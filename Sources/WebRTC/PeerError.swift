import GStreamer
import MediaPipeline
import MediaRuntime

/// Why a peer connection could not do what was asked, wrapping the typed error beneath it.
package enum PeerError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The parameters ask for media this machine cannot build (the compiler's reason: a codec, a
    /// size, a missing element): the caller's request, not a failure of the call.
    case unsupported(PipelineCompileError)
    /// The media graph failed while being built or controlled.
    case media(MediaRuntimeError)
    /// An incoming stream could not be attached (what arrived, and why).
    case incoming(String)
    /// GStreamer refused a step of setting up the connection (webrtcbin, a pad, the pipeline).
    case setup(String)
    case negotiation(String)
    case invalidRemoteDescription(String)
    case closed

    package var description: String {
        switch self {
        case .unsupported(let error): "unsupported media: \(error)"
        case .media(let error): "media: \(error)"
        case .incoming(let message): "incoming media: \(message)"
        case .setup(let message): "peer connection setup failed: \(message)"
        case .negotiation(let message): "negotiation failed: \(message)"
        case .invalidRemoteDescription(let message): "invalid remote description: \(message)"
        case .closed: "the peer connection is closed"
        }
    }
}
