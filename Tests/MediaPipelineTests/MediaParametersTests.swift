@testable import MediaPipeline
import Testing

@Suite("MediaParameters and DataChannelConfig")
struct MediaParametersTests {
    @Test("effective fps: 0 means 30, anything else is kept")
    func effectiveFps() {
        #expect(MediaParameters().effectiveVideoFps == 30)
        #expect(MediaParameters(videoFps: 15).effectiveVideoFps == 15)
    }

    @Test("effective bitrate: the explicit value, else the pixel-count table",
          arguments: [(320, 240, 300), (240, 320, 300), (640, 480, 800), (480, 640, 800), (1280, 720, 1700), (720, 1280, 1700),
                      (1920, 1080, 2500), (642, 480, 1700)])
    func effectiveBitrate(width: Int, height: Int, expected: Int) {
        #expect(MediaParameters(videoWidth: width, videoHeight: height).effectiveVideoMaxBitrateKbps == expected)
        #expect(MediaParameters(videoWidth: width, videoHeight: height, videoMaxBitrate: 1234).effectiveVideoMaxBitrateKbps == 1234)
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
        #expect(MediaParameters().echoCancellationEnabled)
        #expect(!MediaParameters(disableBuiltInAEC: true).echoCancellationEnabled)
        #expect(MediaParameters(disableBuiltInAEC: true).noiseSuppressionEnabled)
        #expect(!MediaParameters(noAudioProcessing: true).echoCancellationEnabled)
        #expect(!MediaParameters(noAudioProcessing: true).noiseSuppressionEnabled)
    }
}
