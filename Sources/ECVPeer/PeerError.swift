import MediaPipeline

/// What went wrong, by PeerJS's and SkyWay's error types (`SKWPeerError`): the kind is stable,
/// the message says what happened.
public struct PeerError: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// The peer id asked for is held by another peer (`ID-TAKEN`).
        case unavailableID = "unavailable-id"
        /// The id asked for is not a PeerJS id.
        case invalidID = "invalid-id"
        /// The server does not know the API key (`INVALID-KEY`).
        case invalidKey = "invalid-key"
        /// The server refused or failed (`ERROR`: origin not allowed, limit reached, bad message).
        case serverError = "server-error"
        /// The server cannot be reached, or the connection to it broke.
        case network
        /// The remote peer is not connected (`EXPIRE`), or left before the connection was set up.
        case peerUnavailable = "peer-unavailable"
        /// The peer was disconnected from the server (`disconnect()`): reconnect first.
        case disconnected
        /// The peer was destroyed.
        case destroyed
        /// The socket to the server closed unexpectedly.
        case socketClosed = "socket-closed"
        /// The WebRTC side failed (media set-up, negotiation, ICE).
        case webrtc
        /// Offer and answer could not be agreed (PeerJS's `negotiation-failed`).
        case negotiationFailed = "negotiation-failed"
        /// A data connection was asked to send before it opened, or after it closed.
        case notOpenYet = "not-open-yet"
        /// A data message larger than the connection's serialization can carry in one piece.
        case messageTooBig = "message-too-big"
        /// An argument or option cannot be honoured (a codec, a size, a malformed server URL).
        case invalidArgument = "invalid-argument"
        /// A recording could not be started or finalised.
        case recording
    }

    public var kind: Kind
    public var message: String
    /// What failed, typed, when the call itself failed (its peer connection and media, its
    /// recording); nil for the server's answers and the API's own checks. The same type the
    /// caller's and the agent bot's errors carry.
    public var cause: CallFailure?

    public init(_ kind: Kind, _ message: String, cause: CallFailure? = nil) {
        self.kind = kind
        self.message = message
        self.cause = cause
    }

    public var description: String { "\(kind.rawValue): \(message)" }

    /// A recording failure: the kind and the typed cause say the same.
    static func recording(_ message: String) -> PeerError { PeerError(.recording, message, cause: .recording(message)) }
}
