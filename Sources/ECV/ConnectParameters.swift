import ECVProtocol
import MediaPipeline

/// The knobs of one WebRTC connection, exactly as the seed SDK's `ConnectParameters` names them,
/// with the same defaults, so `videoCall.connect(parameters:)` code ports unchanged.
///
/// The media facts (codecs, sizes, rates, audio processing) are the pipeline compiler's
/// `MediaParameters`, held in `media`; the rest belongs to the SDK: timeouts, the `/join`
/// request's headers, the text channel, and how the SDK reacts to the agent's commands.
///
/// Declaration order follows the seed's list except for `additionalHeaders`, which is declared
/// **last**: Swift requires arguments in declaration order, and the seed's own example passes
/// `additionalHeaders:` after `videoCodec:`. Declaring it last makes that example compile and
/// lets headers follow any other argument. Units: timeouts in milliseconds.
public struct ConnectParameters: Sendable, Equatable {
    // Connection & signaling
    /// Overall connection attempt timeout (ms).
    public var connectionTimeout: Int
    /// HTTP connect timeout for `/join` (ms).
    public var joinHttpConnectTimeout: Int
    /// HTTP read timeout for `/join` (ms).
    public var joinHttpReadTimeout: Int

    // Behaviour
    /// Photo mode (`TAKE_PHOTO_ON`) switches to the back source, and back after.
    public var autoHandleCameraSwitch: Bool
    /// HOLD mutes local media and PICKUP restores it. The setting's home is
    /// `ECVSdkConfiguration.autoHandleHoldSideEffects` (true by default, as both guides say);
    /// this is the call's own choice over it, nil (the default) leaving it to the configuration.
    public var autoHandleHoldSideEffects: Bool?

    /// What the media pipeline is compiled from; the properties below read and write it.
    public var media: MediaParameters

    // Data channel
    /// The text channel for HOLD/FLASH commands; nil = no text channel.
    public var textChannelConfig: DataChannelConfig?

    // ICE (beyond the seed: the customization guide's "ICE filtering modes"; docs/protocol.md §5.2)
    /// `.relay`: only TURN-relayed candidates (a TURN server must be among the ICE servers, else
    /// the call fails with `INVALID_PARAMETERS`); nil: `ECVSdkConfiguration.iceTransportPolicy`.
    public var iceTransportPolicy: ECVProtocol.ICETransportPolicy? = nil
    /// ICE servers for this call, after the join answer's and the configuration's: e.g. a TURN
    /// server with this call's credentials (`ICEServer(urls:username:credential:)`).
    public var iceServers: [ECVProtocol.ICEServer] = []

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
        autoHandleHoldSideEffects: Bool? = nil,
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
        self.autoHandleCameraSwitch = autoHandleCameraSwitch
        self.autoHandleHoldSideEffects = autoHandleHoldSideEffects
        media = MediaParameters(videoCallEnabled: videoCallEnabled, useSpeakerPhone: useSpeakerPhone, videoWidth: videoWidth,
                                videoHeight: videoHeight, videoFps: videoFps, videoMaxBitrate: videoMaxBitrate, videoCodec: videoCodec,
                                videoCodecHwAcceleration: videoCodecHwAcceleration, audioCodec: audioCodec,
                                audioStartBitrate: audioStartBitrate, noAudioProcessing: noAudioProcessing,
                                disableBuiltInAEC: disableBuiltInAEC, disableBuiltInNS: disableBuiltInNS, tracing: tracing)
        self.textChannelConfig = textChannelConfig
        self.additionalHeaders = additionalHeaders
    }
}

extension ConnectParameters {
    /// Whether HOLD mutes local media: this call's choice, else the SDK configuration's.
    package func holdSideEffects(configured: Bool) -> Bool { autoHandleHoldSideEffects ?? configured }
}

/// The seed's media fields, kept in `media` (see `MediaParameters` for what each means).
extension ConnectParameters {
    public var videoCallEnabled: Bool { get { media.videoCallEnabled } set { media.videoCallEnabled = newValue } }
    public var useSpeakerPhone: Bool { get { media.useSpeakerPhone } set { media.useSpeakerPhone = newValue } }
    /// Beyond the seed: the second output `useSpeakerPhone = false` plays on (see `MediaParameters`).
    public var earpieceSink: String { get { media.earpieceSink } set { media.earpieceSink = newValue } }
    public var videoWidth: Int { get { media.videoWidth } set { media.videoWidth = newValue } }
    public var videoHeight: Int { get { media.videoHeight } set { media.videoHeight = newValue } }
    public var videoFps: Int { get { media.videoFps } set { media.videoFps = newValue } }
    public var videoMaxBitrate: Int { get { media.videoMaxBitrate } set { media.videoMaxBitrate = newValue } }
    /// The preferred video codec: offers list it first and every other usable codec after it,
    /// and an answer takes the offer's first codec this end handles (the seed has one codec).
    public var videoCodec: String { get { media.videoCodec } set { media.videoCodec = newValue } }
    /// Added: the only video codecs the call may use, most preferred first (e.g. `["H264"]`);
    /// empty (the default) allows every codec this machine encodes and decodes. A far end with
    /// none of them ends the call with `NO_COMMON_CODEC` instead of connecting without video.
    public var videoCodecs: [String] { get { media.videoCodecs } set { media.videoCodecs = newValue } }
    public var videoCodecHwAcceleration: Bool { get { media.videoCodecHwAcceleration } set { media.videoCodecHwAcceleration = newValue } }
    public var audioCodec: String { get { media.audioCodec } set { media.audioCodec = newValue } }
    public var audioStartBitrate: Int { get { media.audioStartBitrate } set { media.audioStartBitrate = newValue } }
    public var noAudioProcessing: Bool { get { media.noAudioProcessing } set { media.noAudioProcessing = newValue } }
    public var disableBuiltInAEC: Bool { get { media.disableBuiltInAEC } set { media.disableBuiltInAEC = newValue } }
    public var disableBuiltInNS: Bool { get { media.disableBuiltInNS } set { media.disableBuiltInNS = newValue } }
    public var tracing: Bool { get { media.tracing } set { media.tracing = newValue } }
    /// Beyond the seed (libwebrtc does these with no switch): NACK/RTX (on by default), video
    /// RED/ULPFEC and bandwidth adaptation (`.adaptive` turns them on); `.off` turns all off.
    public var lossRecovery: LossRecovery { get { media.lossRecovery } set { media.lossRecovery = newValue } }
}
