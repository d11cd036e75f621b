@testable import MediaPipeline
import Testing

@Suite("Pre-encoded send graph")
struct PreEncodedSendTests {
    @Test("VP8: appsrc → payloader per kind, no encoder, the same RTP outputs as the encoding graph")
    func vp8() throws {
        let graph = try PipelineCompiler(catalog: Fixtures.software).compilePreEncodedSend(parameters: MediaParameters(videoWidth: 320, videoHeight: 240))
        #expect(graph.factories == ["appsrc", "rtpvp8pay", "appsrc", "rtpopuspay"])
        let encoding = try Fixtures.compile()
        #expect(graph.outputs.map(\.rtpCaps) == encoding.outputs.map(\.rtpCaps))
        let video = try #require(graph.node(PreEncodedSend.videoSource))
        #expect(video[property: "caps"] == .caps("video/x-vp8,width=320,height=240"))
        // Stamped when pushed, so a looped clip keeps rising timestamps.
        #expect(video[property: "do-timestamp"] == .bool(true))
        #expect(graph.node(PreEncodedSend.audioSource)?[property: "caps"] == .caps(PreEncodedSend.audioCaps))
        #expect(graph.links.map { "\($0.from.node)→\($0.to.node)" } == ["video_encoded→video_pay", "audio_encoded→audio_pay"])
        #expect(graph.videoBitrate == nil && graph.videoMute == nil && graph.audioMute == nil)
    }

    @Test("H.264 is parsed before payloading, with SPS/PPS on every IDR")
    func h264() throws {
        let graph = try PipelineCompiler(catalog: Fixtures.software).compilePreEncodedSend(parameters: MediaParameters(videoCodec: "H264"))
        #expect(graph.factories == ["appsrc", "h264parse", "rtph264pay", "appsrc", "rtpopuspay"])
        #expect(graph.node("video_pay")?[property: "config-interval"] == .int(-1))
    }

    @Test("audio-only parameters give only the audio appsrc")
    func audioOnly() throws {
        let graph = try PipelineCompiler(catalog: Fixtures.software).compilePreEncodedSend(parameters: MediaParameters(videoCallEnabled: false))
        #expect(graph.factories == ["appsrc", "rtpopuspay"])
        #expect(graph.outputs.map(\.kind) == [.audio])
    }
}
