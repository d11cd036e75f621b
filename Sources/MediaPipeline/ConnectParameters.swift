/// The knobs of one WebRTC connection, exactly as the seed SDK's `ConnectParameters` names them,
/// with the same defaults, so `videoCall.connect(parameters:)` code ports unchanged.
///
/// Declaration order follows the seed's list except for `additionalHeaders`, which is declared
/// **last**: Swift requires arguments in declaration order, and the seed's own example passes
/// `additionalHeaders:` after `videoCodec:`. Declaring it last makes that example compile and
/// lets headers follow any other argument.
///
/// Units: timeouts in milliseconds, bitrates in kbit/s (as in the seed), sizes in pixels.
/// `0` means "default" for `videoFps`, `videoMaxBitrate` and `audioStartBitrate`; the effective
/// values are `effectiveVideoFps` and `effectiveVideoMaxBitrateKbps`.
public struct ConnectParameters: Sendable, Equatable {
    // Connection & signaling
    /// Overall connection attempt timeout (ms).
    public var connectionTimeout: Int
    /// HTTP connect timeout for `/join` (ms).
    public var joinHttpConnectTimeout: Int
    /// HTTP read timeout for `/join` (ms).
    public var joinHttpReadTimeout: Int

    // Media control & behaviour
    /// False for an audio-only call: the send graph then has no video branch at all.
    public var videoCallEnabled: Bool
    /// Play far-end audio on the speaker; when false, far-end audio is decoded but discarded
    /// (in real time, so echo cancellation and timing stay right).
    public var useSpeakerPhone: Bool
    public var autoHandleCameraSwitch: Bool
    public var autoHandleHoldSideEffects: Bool

    // Video
    public var videoWidth: Int
    public var videoHeight: Int
    /// Frames per second; 0 = 30.
    public var videoFps: Int
    /// Maximum video bitrate in kbit/s; 0 = `VideoBitrateDefaults.kbps(width:height:)`.
    public var videoMaxBitrate: Int
    /// "VP8", "VP9" or "H264" (case-insensitive).
    public var videoCodec: String
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

    // Debugging
    /// Carried into `PipelineGraph.tracing`; the runtime then enables GStreamer's latency tracer.
    public var tracing: Bool

    // Data channel
    /// The text channel for HOLD/FLASH commands; nil = no text channel.
    public var textChannelConfig: DataChannelConfig?

    // Declared last on purpose (see the type's doc comment).
    /// Extra HTTP headers for `/join` and the signaling WebSocket handshake.
    public var additionalHeaders: [String: String]

    public init(
        connectionTimeout: Int = 10000,
        joinHttpConnectTimeout: Int = 3000,
        joinHttpReadTimeout: Int = 3000,
        videoCallEnabled: Bool = true,
        useSpeakerPhone: Bool = true,
        autoHandleCameraSwitch: Bool = true,
        autoHandleHoldSideEffects: Bool = true,
        videoWidth: Int = 480,
        videoHeight: Int = 640,
        videoFps: Int = 0,
        videoMaxBitrate: Int = 0,
        videoCodec: String = "VP8",
        videoCodecHwAcceleration: Bool = true,
        audioCodec: String = "OPUS",
        audioStartBitrate: Int = 0,
        noAudioProcessing: Bool = false,
        disableBuiltInAEC: Bool = false,
        disableBuiltInNS: Bool = false,
        tracing: Bool = false,
        textChannelConfig: DataChannelConfig? = DataChannelConfig.defaultTextChannel,
        additionalHeaders: [String: String] = [:]
    ) {
        self.connectionTimeout = connectionTimeout
        self.joinHttpConnectTimeout = joinHttpConnectTimeout
        self.joinHttpReadTimeout = joinHttpReadTimeout
        self.videoCallEnabled = videoCallEnabled
        self.useSpeakerPhone = useSpeakerPhone
        self.autoHandleCameraSwitch = autoHandleCameraSwitch
        self.autoHandleHoldSideEffects = autoHandleHoldSideEffects
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
        self.textChannelConfig = textChannelConfig
        self.additionalHeaders = additionalHeaders
    }
}

extension ConnectParameters {
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
