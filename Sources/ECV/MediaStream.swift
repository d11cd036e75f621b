import CallEngine
import MediaPipeline
import Synchronization

/// One party's media in a call, as the demo's CallScreen uses them
/// (`localRenderer = webRtcConnection?.localStream`): `WebRtcConnection.localStream` is what this
/// caller sends, `remoteStream` what the agent sends. Attach a renderer, switch a kind of media
/// on or off, and read what each track carries, without reaching into the media graph.
///
/// Switching the local stream's media is the call control (`setAudioEnabled(state:)`, …), with
/// its events and the STATUS the agent is sent. Switching the remote stream's media only changes
/// what this process plays or renders (the agent keeps sending, and recordings keep everything),
/// as disabling a remote track does in a browser or the iOS SDK.
public final class MediaStream: Sendable {
    public enum Party: String, Sendable { case local, remote }

    public let party: Party
    /// Weak: a stream handed to an app (an event's `objData`) must not keep the call alive.
    private weak let connection: WebRtcConnection?
    let feed: RendererFeed

    init(party: Party, connection: WebRtcConnection, feed: RendererFeed) {
        self.party = party
        self.connection = connection
        self.feed = feed
    }

    /// Receives the stream's pictures, RGBA (local: as sent, after mute; remote: decoded). The
    /// same renderer as `WebRtcConnection.localVideoRenderer` / `remoteVideoRenderer`.
    public var videoRenderer: (any VideoRenderer)? {
        get { feed.current }
        set { feed.current = newValue }
    }

    /// The stream's tracks now, video first. A remote track appears once the agent's media of
    /// that kind arrived; a local one once the room started.
    public var tracks: [MediaTrackInfo] { connection?.trackInfo(party) ?? [] }
    public var videoTrack: MediaTrackInfo? { tracks.first { $0.kind == .video } }
    public var audioTrack: MediaTrackInfo? { tracks.first { $0.kind == .audio } }

    public var isAudioEnabled: Bool { connection?.isEnabled(.audio, party) ?? false }
    public var isVideoEnabled: Bool { connection?.isEnabled(.video, party) ?? false }

    /// Local: mutes or unmutes the microphone (the call control, with `AudioMuted`/`AudioUnmuted`
    /// and the agent's STATUS). Remote: silences or plays the agent's sound here.
    public func setAudioEnabled(_ enabled: Bool) async {
        await connection?.setEnabled(.audio, enabled, party)
    }

    /// Local: disables or enables the camera (the call control, with `VideoMuted`/`VideoUnmuted`
    /// and the agent's STATUS). Remote: stops or resumes handing the agent's pictures to the
    /// renderer (they are still decoded and counted).
    public func setVideoEnabled(_ enabled: Bool) async {
        await connection?.setEnabled(.video, enabled, party)
    }
}

/// What one track of a `MediaStream` carries.
public struct MediaTrackInfo: Sendable, Equatable {
    public var kind: MediaKind
    /// The negotiated codec ("VP8", "H264", "OPUS"); nil before the offer/answer completed.
    public var codec: String?
    /// The negotiated RTP payload type.
    public var payloadType: Int?
    /// Picture size: as rendered (remote, and local with a preview), else as configured (the
    /// send graph scales every source to it). nil for audio and before the first picture.
    public var width: Int?
    public var height: Int?
    /// Pictures per second over the last ones seen; the configured rate for a local track
    /// without a preview. nil for audio and before two pictures.
    public var framesPerSecond: Double?
    /// Pictures seen so far (decoded for remote video, previewed for local video).
    public var frames: Int
    /// Whether the track is switched on (see `MediaStream.setAudioEnabled(_:)`).
    public var isEnabled: Bool
}

extension WebRtcConnection {
    func trackInfo(_ party: MediaStream.Party) -> [MediaTrackInfo] {
        let started = state.withLock { $0.setup.started }
        let (codecs, remoteKinds) = (leg?.negotiatedCodecs ?? [:], leg?.remoteKinds ?? [])
        let kinds: [MediaKind] = switch party {
        case .local: started ? (parameters.videoCallEnabled ? [.video, .audio] : [.audio]) : []
        case .remote: [MediaKind.video, .audio].filter(remoteKinds.contains)
        }
        return kinds.map { kind in
            // The codec and payload type the offer/answer agreed on.
            let negotiated = codecs[kind]
            var info = MediaTrackInfo(kind: kind, codec: negotiated?.encodingName, payloadType: negotiated?.payloadType,
                                      frames: 0, isEnabled: isEnabled(kind, party))
            guard kind == .video else { return info }
            let seen = (party == .local ? localFeed : remoteFeed).measurement
            info.frames = seen.frames
            info.width = seen.size?.width
            info.height = seen.size?.height
            info.framesPerSecond = seen.framesPerSecond
            if party == .local, seen.size == nil {
                info.width = parameters.videoWidth
                info.height = parameters.videoHeight
                info.framesPerSecond = Double(parameters.videoFps)
            }
            return info
        }
    }

    func isEnabled(_ kind: MediaKind, _ party: MediaStream.Party) -> Bool {
        switch (party, kind) {
        case (.local, .audio): state.withLock { $0.controls.audioEnabled }
        case (.local, .video): state.withLock { $0.controls.videoEnabled }
        case (.remote, .audio): state.withLock { $0.controls.remoteAudioEnabled }
        case (.remote, .video): remoteFeed.isEnabled
        }
    }

    func setEnabled(_ kind: MediaKind, _ enabled: Bool, _ party: MediaStream.Party) async {
        switch (party, kind) {
        case (.local, .audio): setAudioEnabled(state: enabled)
        case (.local, .video): setVideoEnabled(state: enabled)
        case (.remote, .video): remoteFeed.isEnabled = enabled
        case (.remote, .audio):
            state.withLock { $0.controls.remoteAudioEnabled = enabled }
            await applyRemoteAudioPlayback()
        }
    }

    /// Gives the peer the app's choice for the agent's sound (also right after the peer starts).
    /// Applies the latest choice until what was applied is still the choice, so quick changes
    /// from several tasks end in the last one.
    func applyRemoteAudioPlayback() async {
        guard let peer = peerConnection else { return }
        var enabled = state.withLock { $0.controls.remoteAudioEnabled }
        while true {
            do { try await peer.setRemoteAudioPlaybackMuted(!enabled) } catch {
                call.fail(.WEBRTC_FAILED, "cannot \(enabled ? "play" : "silence") the agent's sound: \(error)", cause: .webrtc(error.description),
                          endingCall: false)
                return
            }
            let latest = state.withLock { $0.controls.remoteAudioEnabled }
            if latest == enabled { return }
            enabled = latest
        }
    }
}
