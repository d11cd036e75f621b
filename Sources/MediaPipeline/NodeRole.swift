/// What a node is for, so the runtime and the WebRTC layer find the elements they control
/// (mute, camera switch, bitrate, appsrc/appsink) without parsing element names.
public enum NodeRole: Sendable, Hashable {
    /// The element that produces video for the named input ("video", "front", "back").
    case videoSource(String)
    /// The element that produces microphone-side audio.
    case audioSource
    /// The `input-selector` that switches front/back cameras without renegotiation.
    case videoSelector
    /// The final raw-video size/rate caps before muting and encoding.
    case videoFormat
    /// `videobalance`: passthrough normally, black frames when muted.
    case videoMute
    /// The small leaky queue that lets the encoder run in its own thread and drop stale frames.
    case videoEncoderQueue
    /// Something an encoder needs in front of it (e.g. `nvvidconv` for NVMM memory).
    case videoEncoderUpload
    case videoEncoder
    /// Caps after the encoder that pin the H.264 profile.
    case videoEncodedFormat
    case videoParser
    case videoPayloader
    /// The raw-audio caps every capture path is normalised to.
    case audioFormat
    /// `webrtcdsp`: echo cancellation, noise suppression, gain control.
    case audioProcessing
    /// `volume`: mute=true sends silence while timestamps continue.
    case audioMute
    /// The small leaky queue in front of the audio encoder: its own thread, and sound that waited
    /// too long (a stream held until the transport is up) dropped instead of sent late.
    case audioEncoderQueue
    case audioEncoder
    case audioPayloader
    /// `volume` on the configured audio source in front of the application-audio mixer: muted
    /// while a clip plays in `.replace` mode (see `MediaParameters.applicationAudio`).
    case applicationAudioGate
    /// `appsrc` the application's played audio enters the call through.
    case applicationAudioSource
    /// `audiomixer` joining the configured source and the application's audio before `webrtcdsp`.
    case applicationAudioMixer
    /// The always-on silence that keeps the speaker mixer running before far-end audio arrives.
    case speakerSilence
    /// The `audiomixer` where every far-end audio stream joins (see `PipelineGraph.speakerInput`).
    case speakerMixer
    /// `webrtcechoprobe`: records what the speaker plays for the echo canceller.
    case echoProbe
    /// The element that plays (or, without speakerphone, discards in real time) far-end audio.
    case speakerSink
    // Receive side
    /// The queue in front of far-end audio playback, so its clock wait holds no other branch.
    case playoutQueue
    /// `volume` in front of far-end audio playback: mute=true silences the speaker (the app's
    /// `remoteStream` audio switch) while recording taps, before it, keep the sound.
    case playbackMute
    case depayloader
    case decoder
    /// An element that converts decoded media for the sink.
    case converter
    /// The appsink delivering decoded video (named by the caller).
    case videoRenderer(String)
    /// The appsink delivering decoded audio samples (named by the caller).
    case audioSamplesSink(String)
    /// The tee a recorder attaches to (named by the caller).
    case recorderTee(String)
    /// A sink that drops media.
    case discardSink
    /// A node that came from a user preset (its name is the preset's).
    case preset(String)
}
