import Foundation
import GStreamer
import MediaPipeline

/// Why a recording could not start, continue or finish, naming the file, track or codec.
package enum RecordingError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file cannot be created or written (missing directory, permissions, a directory).
    case cannotWrite(path: String, reason: String)
    /// The file exists and `RecordingOptions.replaceExisting` is off.
    case fileExists(path: String)
    /// Another recording in this process is writing to the same file.
    case alreadyRecording(path: String)
    /// The container cannot hold the codec (WebM and H.264, MP4 and VP8), or the codec is unknown.
    case unsupportedCodec(codec: String, format: RecordingFormat?, supported: [String])
    /// Two tracks with one role, or a role the recording did not declare.
    case invalidTracks(String)
    /// A `RecordingOptions` or `CompositeLayout` value out of range.
    case invalidOptions(String)
    /// The stream handed to `attach` is not what the track was declared with.
    case trackMismatch(role: TrackRole, expected: String, got: String)
    case notStarted
    case alreadyStarted
    /// `stop()` was called on a recording that has already stopped.
    case alreadyStopped
    /// A snapshot was asked of a track that has not delivered a key frame yet.
    case noVideo(role: TrackRole, reason: String)
    /// The recording pipeline failed (an element error, a state change or EOS that never came).
    case pipeline(String)
    case gstreamer(GStreamerError)

    package var description: String {
        switch self {
        case .cannotWrite(let path, let reason): "cannot record to \(path): \(reason)"
        case .fileExists(let path):
            "\(path) already exists; remove it or set RecordingOptions.replaceExisting to overwrite it"
        case .alreadyRecording(let path): "\(path) is already being recorded by another recording"
        case .unsupportedCodec(let codec, let format?, let supported):
            "\(format.rawValue) recordings cannot hold \(codec) without re-encoding (\(format.muxerFactory) takes \(supported.joined(separator: ", ")))"
        case .unsupportedCodec(let codec, nil, let supported):
            "cannot record codec '\(codec)'; recordable codecs: \(supported.joined(separator: ", "))"
        case .invalidTracks(let message): "invalid recording tracks: \(message)"
        case .invalidOptions(let message): "invalid recording options: \(message)"
        case .trackMismatch(let role, let expected, let got):
            "the \(role.rawValue) track was declared as \(expected) but the stream carries \(got)"
        case .notStarted: "the recording has not been started"
        case .alreadyStarted: "the recording has already been started"
        case .alreadyStopped: "the recording has already stopped"
        case .noVideo(let role, let reason): "no \(role.rawValue) picture: \(reason)"
        case .pipeline(let message): "recording failed: \(message)"
        case .gstreamer(let error): "recording failed: \(error)"
        }
    }
}
