import MediaPipeline
import MediaRuntime
import WebRTC

/// What a facade wants its send graph to do: the mute states and the camera.
package struct SendState: Sendable, Equatable {
    package var audioEnabled: Bool
    /// nil: the call sends no video, nothing to apply.
    package var videoEnabled: Bool?
    /// The camera to show (nil: leave it), by the name the send graph registered it under.
    package var camera: String?

    package init(audioEnabled: Bool, videoEnabled: Bool?, camera: String? = nil) {
        self.audioEnabled = audioEnabled
        self.videoEnabled = videoEnabled
        self.camera = camera
    }
}

/// The media controls, stats and codecs of a call, for every product alike.
extension CallLeg {
    /// Runs a control in the peer's one order of operations, with the running send graph (nil
    /// before the peer runs or once it closed: then at once, and the facade's state is applied
    /// when the media starts). A facade that changes its state, applies it, raises its event and
    /// tells the far end as one such step leaves the media and what it said in agreement.
    package func inControlOrder(_ control: @escaping @Sendable (SendMedia?) -> Void) {
        if let peer, peer.submit({ peer in control(peer.media) }) { return }
        control(nil)
    }

    /// Waits until every control submitted before has been applied (tests, diagnostics).
    package func controlsApplied() async {
        await peer?.perform { _ in }
    }

    /// Applies `sendState` to `media`. Pre-encoded media has no mute stage: it is sent as it was
    /// encoded, and nothing is applied.
    package static func apply(_ sendState: SendState, to media: SendMedia) throws(MediaRuntimeError) {
        guard media.graph.audioMute != nil else { return }
        try media.setAudioMuted(!sendState.audioEnabled)
        if let video = sendState.videoEnabled { try media.setVideoMuted(!video) }
        if let camera = sendState.camera, media.activeCamera != camera { try media.switchCamera(to: camera) }
    }

    /// A stats sample of the peer connection; nil before the peer runs or after it closed.
    package func stats() async -> PeerStats? {
        guard let peer else { return nil }
        do { return try await peer.stats() } catch { return nil }
    }

    /// The negotiated codecs by kind as the products show them ("video": "VP8/96").
    package var negotiatedCodecNames: [String: String] {
        Dictionary(uniqueKeysWithValues: negotiatedCodecs.map { ($0.key.rawValue, $0.value.description) })
    }

    /// The call's media pipeline as Graphviz text, for diagnostics; nil before the peer runs.
    package func pipelineDOT() async -> String? {
        guard let peer else { return nil }
        return await peer.dot
    }
}
