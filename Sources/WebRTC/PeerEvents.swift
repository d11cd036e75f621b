import GStreamer
import MediaPipeline

/// The single view of a connection the layers above act on.
package enum PeerState: String, Sendable {
    case new, connecting, connected, disconnected, failed, closed
}

/// Everything a peer connection reports, in the order it happened.
package enum PeerEvent: Sendable {
    case signalingStateChanged(SignalingState)
    case iceGatheringStateChanged(ICEGatheringState)
    case iceConnectionStateChanged(ICEConnectionState)
    /// webrtcbin's own peer-connection state.
    case connectionStateChanged(ConnectionState)
    /// The summary state (`PeerState`), including our own liveness watchdog.
    case stateChanged(PeerState)
    case sentOffer(String)
    case sentAnswer(String)
    case receivedOffer(String)
    case receivedAnswer(String)
    case negotiationNeeded
    /// A remote stream arrived and was attached as configured.
    case remoteStream(RemoteStream)
    /// A data channel opened by the remote side (channels we create are returned directly).
    case remoteDataChannel(DataChannelHandle)
    /// The remote opened a reliable channel under a label we do not use while a channel we
    /// configured had none, so it now carries that channel's traffic (events and sends of the
    /// configured handle). Reported before its `remoteDataChannel`.
    case adoptedDataChannel(remoteLabel: String, configuredLabel: String)
    /// The remote's offer has no format our stream of `kind` can be sent as: it is not sent.
    case unmatchedMedia(kind: MediaKind, reason: String)
    /// Offer and answer have no codec of `kind` in common: `ours` is what this end offers or
    /// accepts, `theirs` what the far end listed (most preferred first). That media is not sent.
    case noCommonCodec(kind: MediaKind, ours: [String], theirs: [String])
    /// A direction the negotiation agreed on has carried no RTP for `MediaDirectionWatch.silence`
    /// while connected (reported once per negotiation); `everCarried` says whether it had before.
    case mediaSilent(MediaDirection, everCarried: Bool)
    /// The directions the completed answer makes travel, from this end (after `negotiated`).
    case directionsNegotiated(Set<MediaDirection>)
    /// Offer and answer are complete: the codec (and payload type) of each kind of media.
    case negotiated([MediaKind: NegotiatedCodec])
    /// The far end closed its RTCPeerConnection (its DTLS close_notify, `FarEndCloseWatch`):
    /// nothing more will come on this connection. Reported once per transport.
    case farEndClosed(String)
    /// The peer was rebuilt (new webrtcbin) and is negotiating again; the count starts at 1.
    case rebuilt(Int)
    /// A failure that does not close the connection by itself (e.g. a bad remote candidate).
    /// Bandwidth adaptation changed what the sender runs at (target, estimate, frame rate, FEC).
    case bandwidthChanged(BandwidthEstimator.Decision)
    case error(String)
}

/// An incoming media stream and where it went.
package struct RemoteStream: Sendable {
    package var kind: MediaKind
    package var encodingName: String
    package var caps: String
    /// The RTP SSRC, when the caps carried it.
    package var ssrc: UInt?
    package var sink: ReceiveSinkSpec
    /// The appsink delivering decoded frames or samples, for renderer and samples sinks.
    package var appSink: AppSink?
    /// The tee after depayloading and parsing, for passthrough sinks.
    package var recorderTee: Element?
    /// A tee carrying the stream's RTP packets as received (`allow-not-linked`): request a src pad
    /// to tap the stream (record it, decode it a second time) without re-encoding or disturbing it.
    package var rtpTee: Element
}
