/// Why application audio or video could not go into or come out of a call.
public enum AppMediaError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A format the SDK does not convert to (rate, channels, frame length).
    case invalidFormat(String)
    /// A frame or clip that does not match its format, or is too large.
    case invalidFrame(String)
    /// The call's media is not running (not started, or ended).
    case notRunning(String)
    /// The call was not set up to take application media (see `MediaParameters.applicationAudio`).
    case notEnabled(String)
    /// A file that could not be opened or decoded.
    case file(path: String, reason: String)
    /// GStreamer refused something (an element missing, a state change).
    case media(String)
    /// A speech engine failed.
    case speech(String)

    public var description: String {
        switch self {
        case .invalidFormat(let reason): "invalid audio format: \(reason)"
        case .invalidFrame(let reason): "invalid frame: \(reason)"
        case .notRunning(let reason): "the call's media is not running: \(reason)"
        case .notEnabled(let reason): "application media is not enabled: \(reason)"
        case .file(let path, let reason): "\(path): \(reason)"
        case .media(let reason): "media: \(reason)"
        case .speech(let reason): "speech: \(reason)"
        }
    }
}
