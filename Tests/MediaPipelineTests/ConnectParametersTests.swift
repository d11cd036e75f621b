@testable import MediaPipeline
import Testing

@Suite("ConnectParameters and DataChannelConfig")
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
        #expect(parameters.autoHandleHoldSideEffects)
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

    @Test("effective fps: 0 means 30, anything else is kept")
    func effectiveFps() {
        #expect(ConnectParameters().effectiveVideoFps == 30)
        #expect(ConnectParameters(videoFps: 15).effectiveVideoFps == 15)
    }

    @Test("effective bitrate: the explicit value, else the pixel-count table",
          arguments: [(320, 240, 300), (240, 320, 300), (640, 480, 800), (480, 640, 800), (1280, 720, 1700), (720, 1280, 1700),
                      (1920, 1080, 2500), (642, 480, 1700)])
    func effectiveBitrate(width: Int, height: Int, expected: Int) {
        #expect(ConnectParameters(videoWidth: width, videoHeight: height).effectiveVideoMaxBitrateKbps == expected)
        #expect(ConnectParameters(videoWidth: width, videoHeight: height, videoMaxBitrate: 1234).effectiveVideoMaxBitrateKbps == 1234)
    }

    @Test("DataChannelConfig has the seed's initializer and defaults")
    func dataChannelConfig() {
        let config = DataChannelConfig(enabled: true, label: "cmd")
        #expect(config.id == -1)
        #expect(!config.negotiated)
        #expect(config.protocol == "")
        #expect(config.ordered)
        #expect(config.maxRetransmits == -1)
        #expect(config.maxRetransmitTimeMs == -1)
        let full = DataChannelConfig(enabled: false, label: "x", id: 3, negotiated: true, protocol: "ecv-1", ordered: false,
                                     maxRetransmits: 2, maxRetransmitTimeMs: 500)
        #expect(full.protocol == "ecv-1")
        #expect(full.id == 3 && full.negotiated && !full.ordered && full.maxRetransmits == 2 && full.maxRetransmitTimeMs == 500)
        #expect(!full.enabled)
    }

    @Test("AEC and NS flags derive from the three audio switches")
    func audioProcessingFlags() {
        #expect(ConnectParameters().echoCancellationEnabled)
        #expect(!ConnectParameters(disableBuiltInAEC: true).echoCancellationEnabled)
        #expect(ConnectParameters(disableBuiltInAEC: true).noiseSuppressionEnabled)
        #expect(!ConnectParameters(noAudioProcessing: true).echoCancellationEnabled)
        #expect(!ConnectParameters(noAudioProcessing: true).noiseSuppressionEnabled)
    }
}
