import ECV
import Testing

/// The SDK's `ConnectParameters`: the seed's names, defaults and example, and the media facts it
/// hands the pipeline compiler.
@Suite("ConnectParameters as the seed has them")
struct ConnectParametersTests {
    @Test("defaults match the seed SDK exactly")
    func defaultsMatchSeed() {
        let parameters = ConnectParameters()
        #expect(parameters.connectionTimeout == 10000)
        #expect(parameters.joinHttpConnectTimeout == 3000)
        #expect(parameters.joinHttpReadTimeout == 3000)
        #expect(parameters.additionalHeaders.isEmpty)
        #expect(parameters.videoCallEnabled)
        #expect(parameters.useSpeakerPhone)
        #expect(parameters.autoHandleCameraSwitch)
        #expect(parameters.autoHandleHoldSideEffects == nil, "the configuration's, true by default")
        #expect(parameters.videoWidth == 480)
        #expect(parameters.videoHeight == 640)
        #expect(parameters.videoFps == 0)
        #expect(parameters.videoMaxBitrate == 0)
        #expect(parameters.videoCodec == "VP8")
        #expect(parameters.videoCodecHwAcceleration)
        #expect(parameters.audioCodec == "OPUS")
        #expect(parameters.audioStartBitrate == 0)
        #expect(!parameters.noAudioProcessing)
        #expect(!parameters.disableBuiltInAEC)
        #expect(!parameters.disableBuiltInNS)
        #expect(!parameters.tracing)
        #expect(parameters.textChannelConfig == DataChannelConfig(enabled: true, label: "textchannel"))
    }

    @Test("the seed's own example compiles and sets what it says")
    func seedExampleCompiles() {
        let customConnectParams = ConnectParameters(
            videoWidth: 1280,
            videoHeight: 720,
            videoCodec: "H264",
            additionalHeaders: ["X-WebRTC-Auth": "webrtc_token"]
        )
        #expect(customConnectParams.videoWidth == 1280)
        #expect(customConnectParams.videoHeight == 720)
        #expect(customConnectParams.videoCodec == "H264")
        #expect(customConnectParams.additionalHeaders == ["X-WebRTC-Auth": "webrtc_token"])
        #expect(customConnectParams.videoFps == 0)
    }

    @Test("hold side effects: the call's choice, else the configuration's")
    func holdSideEffectsHaveOneHome() {
        #expect(ConnectParameters().holdSideEffects(configured: true))
        #expect(!ConnectParameters().holdSideEffects(configured: false))
        #expect(ConnectParameters(autoHandleHoldSideEffects: true).holdSideEffects(configured: false))
        #expect(!ConnectParameters(autoHandleHoldSideEffects: false).holdSideEffects(configured: true))
    }

    @Test("the media facts are the compiler's parameters, read and written through the seed's names")
    func mediaFactsAreTheCompilersParameters() {
        var parameters = ConnectParameters(videoWidth: 320, videoHeight: 240, videoCodec: "H264", noAudioProcessing: true)
        #expect(parameters.media.videoWidth == 320 && parameters.media.videoHeight == 240 && parameters.media.videoCodec == "H264")
        #expect(parameters.media.noAudioProcessing)
        parameters.videoFps = 15
        parameters.media.videoMaxBitrate = 900
        #expect(parameters.media.videoFps == 15 && parameters.videoMaxBitrate == 900)
    }
}
