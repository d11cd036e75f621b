import GStreamer
import MediaPipeline

/// What can go wrong turning a compiled graph into running media, naming the node or control.
package enum MediaRuntimeError: Error, Sendable, Equatable, CustomStringConvertible {
    case gstreamer(GStreamerError)
    case compile(PipelineCompileError)
    case missingNode(String)
    /// A control the graph does not have, e.g. video bitrate on an audio-only call.
    case unavailable(control: String, reason: String)
    case unknownCamera(String, available: [String])

    package var description: String {
        switch self {
        case .gstreamer(let error): error.description
        case .compile(let error): error.description
        case .missingNode(let id): "the running graph has no element '\(id)'"
        case .unavailable(let control, let reason): "\(control) is not available: \(reason)"
        case .unknownCamera(let name, let available):
            "no camera '\(name)'; available: \(available.isEmpty ? "none (single video source)" : available.joined(separator: ", "))"
        }
    }
}
