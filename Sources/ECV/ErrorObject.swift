import MediaPipeline

/// The seed's error names, plus names for failures the guide does not list (marked "added").
public enum ErrorName: String, Sendable, CaseIterable {
    case NO_ERROR
    /// The configuration has no service URL.
    case SERVICE_URL_REQUIRED
    /// The call has no rtcId (getting one failed), so it cannot be started.
    case CALL_NOT_INITIALIZED
    /// `start()` was called twice, or the service says the rtcId was dialed before.
    case CALL_ALREADY_DIALED
    /// The queue socket closed without a final message, or could not be opened.
    case QUEUE_SOCKET_CLOSED
    /// DialEx failed (HTTP error, 4xx/5xx answer, unreachable service).
    case ERROR_DIALING
    /// An operation needs a dialed call (hangup, connect) and the call was never dialed.
    case CALL_NOT_DIALED
    /// Polling for the agent failed repeatedly, or the service no longer knows the call.
    case ERROR_WAITING_FOR_ROOM
    /// The join answer had no ICE servers and none are configured.
    case NO_ICE_SERVERS_FOUND
    /// The service refused or failed the hangup; the call is ended locally anyway.
    case HANGUP_FAILED

    /// Added: the service did not hand out an rtcId.
    case GET_RTC_ID_FAILED
    /// Added: `/join` failed, timed out, or the room was full.
    case JOIN_ROOM_FAILED
    /// Added: the signaling WebSocket could not connect or failed.
    case SIGNALING_FAILED
    /// Added: the peer connection or its media could not be set up or failed for good.
    case WEBRTC_FAILED
    /// Added: ConnectParameters or DialCallParameters ask for something impossible (e.g. AV1).
    case INVALID_PARAMETERS
    /// Added: a command could not be sent on the text channel.
    case TEXT_CHANNEL_ERROR
    /// Added: no flashlight handler is installed (headless Linux has no torch).
    case FLASHLIGHT_UNAVAILABLE
    /// Added: switching the camera failed (e.g. only one video source registered).
    case CAMERA_SWITCH_FAILED
    /// Added: recording could not start or failed.
    case RECORDING_FAILED
    /// Added: the operation needs a live call and this one already ended.
    case CALL_ENDED
    /// Added: the two ends have no codec of one kind of media in common (e.g. `videoCodecs` is
    /// `["H264"]` and the far end takes only VP8); the message names both sides' lists and the
    /// call ends rather than connect without that media.
    case NO_COMMON_CODEC
}

/// The names the guide's events section uses for failures the list above names otherwise: the
/// same values, so `error.error.name == .DIAL_FAILED` and `case .DIAL_FAILED:` match
/// `ERROR_DIALING`. `rawValue` (and `data["name"]` of an `Error` event) is always the listed name.
extension ErrorName {
    /// The events section's name for `ERROR_DIALING` (DialEx failed).
    public static let DIAL_FAILED = ErrorName.ERROR_DIALING
    /// The events section's name for `QUEUE_SOCKET_CLOSED` (the queue socket failed or closed).
    public static let QUEUE_SOCKET_ERROR = ErrorName.QUEUE_SOCKET_CLOSED
    /// The events section's name for `ERROR_WAITING_FOR_ROOM` (v1.5 polling failed).
    public static let WAIT_FOR_ROOM_FAILED = ErrorName.ERROR_WAITING_FOR_ROOM

    /// The guide's other names, each with the listed name it stands for.
    public static let guideAliases: [String: ErrorName] = [
        "DIAL_FAILED": .ERROR_DIALING, "QUEUE_SOCKET_ERROR": .QUEUE_SOCKET_CLOSED, "WAIT_FOR_ROOM_FAILED": .ERROR_WAITING_FOR_ROOM,
    ]

    /// A listed name or one of the guide's aliases (`"DIAL_FAILED"` is `.ERROR_DIALING`).
    public init?(named name: String) {
        guard let value = ErrorName(rawValue: name) ?? Self.guideAliases[name] else { return nil }
        self = value
    }
}

/// The last error of a call (`videoCall.lastError`).
public final class ErrorObject: Error, Sendable, CustomStringConvertible {
    public let name: ErrorName
    public let message: String
    /// What failed, typed, when the call itself failed (its signaling, its peer connection and
    /// media, its recording); nil for the service's answers and the API's own checks. The same
    /// type the agent bot's and the peer model's errors carry.
    public let cause: CallFailure?

    public init(name: ErrorName = ErrorName.NO_ERROR, message: String = "No error.", cause: CallFailure? = nil) {
        self.name = name
        self.message = message
        self.cause = cause
    }

    public var description: String { "\(name.rawValue): \(message)" }
}

/// How the SDK reports a failure, everywhere: the call's `lastError` is set and an `Error` event
/// carries it (`detail`: the message, `data["name"]`: the name); an API that `throws` also throws
/// it as an `ECVError`. A failure that ends the call is followed by `CallEnded`.
public struct ECVError: Error, Sendable, CustomStringConvertible {
    /// The same object as the call's `lastError` at the time.
    public let error: ErrorObject
    /// What failed underneath, for logs; its type belongs to the SDK's inner layers.
    public let underlying: (any Error & Sendable)?

    init(_ error: ErrorObject, underlying: (any Error & Sendable)? = nil) {
        self.error = error
        self.underlying = underlying
    }

    public var name: ErrorName { error.name }
    /// `error.cause`: what failed, typed, when the call itself failed.
    public var cause: CallFailure? { error.cause }
    public var description: String { error.description }
}

/// The name call controls' failures had before every SDK failure became an `ECVError`.
public typealias CallControlError = ECVError
