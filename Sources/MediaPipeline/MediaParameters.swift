/// What the pipeline compiler needs to know of a call's media: codecs, sizes, rates, bitrates and
/// audio processing, nothing about signaling or the call's behaviour. The SDK's
/// `MediaParameters` (the seed's names and defaults, in `ECV`) carries one and adds the rest.
///
/// Units: bitrates in kbit/s (as in the seed), sizes in pixels. `0` means "default" for
/// `videoFps`, `videoMaxBitrate` and `audioStartBitrate`; the effective values are
/// `effectiveVideoFps` and `effectiveVideoMaxBitrateKbps`. The defaults are the seed's.
public struct MediaParameters: Sendable, Equatable {
    /// False for an audio-only call: the send graph then has no video branch at all.
    public var videoCallEnabled: Bool
    /// Play far-end audio on the speaker (the default output); when false, on the second output,
    /// `earpieceSink` (as iOS plays to the earpiece). Echo cancellation hears either.
    public var useSpeakerPhone: Bool
    /// The second output (`useSpeakerPhone = false`): an audio sink chain in the preset syntax,
    /// e.g. `pulsesink device=<sink name>`; default `autoaudiosink`. Validated when the graph is
    /// compiled (a malformed chain fails the call's media set-up with a clear error).
    public var earpieceSink: String = MediaParameters.defaultEarpieceSink

    // Video
    public var videoWidth: Int
    public var videoHeight: Int
    /// false (the seed's ConnectParameters): video is sent at exactly `videoWidth`×`videoHeight`.
    /// true (SkyWay's `maxWidth`/`maxHeight`, "upper limits in pixels"): the source's own size,
    /// scaled down to fit within them with its aspect kept (never up), even in both dimensions.
    public var videoSizeIsUpperBound = false
    /// Frames per second; 0 = 30.
    public var videoFps: Int
    /// Maximum video bitrate in kbit/s; 0 = `VideoBitrateDefaults.kbps(width:height:)`.
    public var videoMaxBitrate: Int
    /// The preferred video codec: "VP8", "VP9" or "H264" (case-insensitive). Offers list it first
    /// and every other usable codec after it; the answerer picks (see `VideoCodecPreference`).
    public var videoCodec: String
    /// The only video codecs the call may use, in order of preference (e.g. `["H264"]`); empty:
    /// any codec this machine can encode and decode. With no codec in common the call fails.
    public var videoCodecs: [String] = []
    /// Prefer a hardware encoder when the element catalog has one for the codec.
    public var videoCodecHwAcceleration: Bool

    // Audio
    /// "OPUS" (case-insensitive). The seed also lists "ISAC", which GStreamer does not implement.
    public var audioCodec: String
    /// Initial Opus bitrate in kbit/s; 0 = the encoder's default (64 kbit/s for opusenc).
    public var audioStartBitrate: Int
    /// Skip `webrtcdsp` entirely (no AEC, NS or AGC).
    public var noAudioProcessing: Bool
    /// Turn echo cancellation off while keeping the other processing.
    public var disableBuiltInAEC: Bool
    /// Turn noise suppression off while keeping the other processing.
    public var disableBuiltInNS: Bool
    /// Let the application play audio into the call (prompts, speech, files): the send graph
    /// gets an `appsrc` mixed with the configured source in front of the audio processing, so
    /// the played audio is encoded like the microphone's. Off by default: the mixer costs a
    /// little CPU and 10 ms of latency on every call that never plays anything.
    public var applicationAudio = false

    // Debugging
    /// Carried into `PipelineGraph.tracing`; the runtime then enables GStreamer's latency tracer.
    public var tracing: Bool

    // Networks
    /// Retransmission, forward error correction and bandwidth adaptation (beyond the seed).
    public var lossRecovery: LossRecovery

    public init(videoCallEnabled: Bool = true, useSpeakerPhone: Bool = true, videoWidth: Int = 480, videoHeight: Int = 640,
                videoFps: Int = 0, videoMaxBitrate: Int = 0, videoCodec: String = "VP8", videoCodecHwAcceleration: Bool = true,
                audioCodec: String = "OPUS", audioStartBitrate: Int = 0, noAudioProcessing: Bool = false,
                disableBuiltInAEC: Bool = false, disableBuiltInNS: Bool = false, tracing: Bool = false,
                lossRecovery: LossRecovery = LossRecovery()) {
        self.lossRecovery = lossRecovery
        self.videoCallEnabled = videoCallEnabled
        self.useSpeakerPhone = useSpeakerPhone
        self.videoWidth = videoWidth
        self.videoHeight = videoHeight
        self.videoFps = videoFps
        self.videoMaxBitrate = videoMaxBitrate
        self.videoCodec = videoCodec
        self.videoCodecHwAcceleration = videoCodecHwAcceleration
        self.audioCodec = audioCodec
        self.audioStartBitrate = audioStartBitrate
        self.noAudioProcessing = noAudioProcessing
        self.disableBuiltInAEC = disableBuiltInAEC
        self.disableBuiltInNS = disableBuiltInNS
        self.tracing = tracing
    }
}

extension MediaParameters {
    /// The frame rate used when `videoFps` is 0, as the seed's "Defaults to ~30".
    public static let defaultVideoFps = 30

    /// `videoFps`, with 0 meaning `defaultVideoFps`.
    public var effectiveVideoFps: Int { videoFps == 0 ? Self.defaultVideoFps : videoFps }

    /// `videoMaxBitrate`, with 0 meaning the resolution-based default of `VideoBitrateDefaults`.
    public var effectiveVideoMaxBitrateKbps: Int {
        videoMaxBitrate == 0 ? VideoBitrateDefaults.kbps(width: videoWidth, height: videoHeight) : videoMaxBitrate
    }

    /// True when the capture path runs `webrtcdsp` with echo cancellation, which also requires a
    /// `webrtcechoprobe` in front of the speaker (see `PipelineGraph.speakerInput`).
    public var echoCancellationEnabled: Bool { !noAudioProcessing && !disableBuiltInAEC }

    /// True when the capture path runs `webrtcdsp` with noise suppression.
    public var noiseSuppressionEnabled: Bool { !noAudioProcessing && !disableBuiltInNS }
}
