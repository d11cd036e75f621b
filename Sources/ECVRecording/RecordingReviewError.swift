import MediaRuntime

/// Why a recording could not be reviewed, or a picture of it not drawn or written, naming the file.
public enum RecordingReviewError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file cannot be read (absent, not a regular file, no permission, empty).
    case cannotRead(path: String, reason: String)
    /// The file's first bytes are neither Matroska/WebM nor MP4, whatever its name says.
    case notARecording(path: String)
    /// A picture's option out of range (the contact sheet's interval or its number of rows).
    case invalidOptions(String)
    /// The recording has nothing to draw for the picture asked (no video track for a contact sheet).
    case nothingToDraw(String)
    /// A picture could not be written.
    case cannotWrite(path: String, reason: String)
    /// Reading the file back, decoding a frame or rasterising a picture failed in GStreamer.
    case pipeline(String)

    public var description: String {
        switch self {
        case .cannotRead(let path, let reason): "cannot read \(path): \(reason)"
        case .notARecording(let path): "\(path) is not a recording: its first bytes are neither Matroska/WebM nor MP4"
        case .invalidOptions(let message): "invalid picture options: \(message)"
        case .nothingToDraw(let message): message
        case .cannotWrite(let path, let reason): "cannot write \(path): \(reason)"
        case .pipeline(let message): message
        }
    }

    /// A failure of the picture pipelines below (decoding, PNG encoding), in this module's terms.
    init(_ error: RecordingError) {
        switch error {
        case .cannotWrite(let path, let reason): self = .cannotWrite(path: path, reason: reason)
        case .pipeline(let message): self = .pipeline(message)
        case .gstreamer(let error): self = .pipeline("\(error)")
        default: self = .pipeline(error.description)
        }
    }
}
