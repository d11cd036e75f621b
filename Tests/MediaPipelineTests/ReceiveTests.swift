@testable import MediaPipeline
import Testing

@Suite("Receive fragments")
struct ReceiveTests {
    let compiler = PipelineCompiler(catalog: Fixtures.software)

    private func receive(_ kind: MediaKind, _ encoding: String, _ sink: ReceiveSinkSpec,
                         _ parameters: MediaParameters = MediaParameters(), catalog: StaticCatalog = Fixtures.software,
                         prefix: String? = nil) throws -> PipelineFragment {
        try PipelineCompiler(catalog: catalog).compileReceive(kind: kind, encodingName: encoding, sink: sink, parameters: parameters, idPrefix: prefix)
    }

    @Test("renderers: depayloader → decoder → videoconvert → format caps → appsink",
          arguments: [("VP8", ["rtpvp8depay", "vp8dec"]), ("VP9", ["rtpvp9depay", "vp9dec"]), ("H264", ["rtph264depay", "h264parse", "avdec_h264"])])
    func renderer(encoding: String, head: [String]) throws {
        let fragment = try receive(.video, encoding, .renderer(name: "remote"))
        #expect(fragment.nodes.map(\.factory) == head + ["videoconvert", "capsfilter", "appsink"])
        #expect(fragment.entry == PadRef(fragment.nodes[0].id, pad: "sink"))
        #expect(fragment.exit == nil)
        let sink = try #require(fragment.node("remote"))
        #expect(sink.role == .videoRenderer("remote"))
        #expect(sink[property: "sync"] == .bool(false))
        #expect(fragment.node("remote_format")?[property: "caps"] == .caps("video/x-raw,format=RGBA"))
        let i420 = try receive(.video, encoding, .renderer(name: "remote", format: .i420))
        #expect(i420.node("remote_format")?[property: "caps"] == .caps("video/x-raw,format=I420"))
    }

    @Test("H.264 decoder: highest rank installed, openh264dec when libav is missing, error when neither")
    func h264DecoderChoice() throws {
        let noLibav = try receive(.video, "H264", .renderer(name: "remote"), catalog: Fixtures.software.removing(["avdec_h264"]))
        #expect(noLibav.node("remote_decoder")?.factory == "openh264dec")
        let failure = compileError { () throws(PipelineCompileError) in
            _ = try PipelineCompiler(catalog: Fixtures.software.removing(["avdec_h264", "openh264dec"]))
                .compileReceive(kind: .video, encodingName: "H264", sink: .renderer(name: "remote"), parameters: MediaParameters())
        }
        #expect(failure?.description.contains("gstreamer1.0-libav") == true)
    }

    @Test("passthrough keeps media encoded and ends in a named tee; H.264 as avc access units")
    func passthrough() throws {
        let h264 = try receive(.video, "H264", .passthrough(name: "rec"))
        #expect(h264.nodes.map(\.factory) == ["rtph264depay", "h264parse", "capsfilter", "tee"])
        #expect(h264.node("rec_format")?[property: "caps"] == .caps("video/x-h264,stream-format=avc,alignment=au"))
        #expect(h264.node("rec")?.role == .recorderTee("rec"))
        #expect(h264.node("rec")?[property: "allow-not-linked"] == .bool(true))
        #expect(try receive(.video, "VP8", .passthrough(name: "rec")).nodes.map(\.factory) == ["rtpvp8depay", "tee"])
        #expect(try receive(.audio, "OPUS", .passthrough(name: "rec")).nodes.map(\.factory) == ["rtpopusdepay", "tee"])
    }

    @Test("discard depayloads into a fakesink")
    func discard() throws {
        #expect(try receive(.video, "VP9", .discard).nodes.map(\.factory) == ["rtpvp9depay", "fakesink"])
        #expect(try receive(.audio, "OPUS", .discard).nodes.map(\.factory) == ["rtpopusdepay", "fakesink"])
    }

    @Test("playback with AEC joins the send graph's speaker mixer, which holds the echo probe")
    func playbackWithAEC() throws {
        let parameters = MediaParameters()
        let fragment = try receive(.audio, "OPUS", .playback, parameters)
        let send = try Fixtures.compile(parameters)
        #expect(fragment.exit == PadRef("rx_audio_format"))
        #expect(fragment.exitTarget == send.speakerInput)
        #expect(!fragment.nodes.contains { $0.factory.hasSuffix("sink") })
        #expect(send.nodes(withRole: .echoProbe).count == 1)
        #expect(fragment.node("rx_audio_decoder")?[property: "plc"] == .bool(true))
    }

    @Test("playback without AEC has no echo probe anywhere and plays by itself")
    func playbackWithoutAEC() throws {
        for parameters in [MediaParameters(disableBuiltInAEC: true), MediaParameters(noAudioProcessing: true)] {
            let fragment = try receive(.audio, "OPUS", .playback, parameters)
            #expect(!fragment.nodes.contains { $0.factory == "webrtcechoprobe" })
            #expect(!(try Fixtures.compile(parameters)).factories.contains("webrtcechoprobe"))
            #expect(fragment.exit == nil && fragment.exitTarget == nil)
            #expect(fragment.nodes.last?.factory == "autoaudiosink")
        }
        // Speakerphone off: the earpiece output (the default output unless one is named).
        let earpiece = try receive(.audio, "OPUS", .playback, MediaParameters(useSpeakerPhone: false, disableBuiltInAEC: true))
        #expect(earpiece.nodes.last?.factory == "autoaudiosink" && earpiece.nodes.last?.role == .speakerSink)
        var named = MediaParameters(useSpeakerPhone: false, disableBuiltInAEC: true)
        named.earpieceSink = "alsasink device=hw:1"
        let device = try receive(.audio, "OPUS", .playback, named)
        #expect(device.nodes.last?.factory == "alsasink" && device.nodes.last?[property: "device"] == .serialized("hw:1"))
        #expect(device.links.contains(PipelineLink(from: PadRef("rx_audio_playback_mute"), to: PadRef("rx_audio_sink"))))
    }

    @Test("audio samples for the application: S16LE mono 48 kHz appsink")
    func audioSamples() throws {
        let fragment = try receive(.audio, "OPUS", .audioSamples(name: "far_audio"))
        #expect(fragment.nodes.last?.factory == "appsink")
        #expect(fragment.nodes.last?.role == .audioSamplesSink("far_audio"))
        #expect(fragment.node("far_audio_format")?[property: "caps"] == .caps("audio/x-raw,format=S16LE,layout=interleaved,rate=48000,channels=1"))
    }

    @Test("sink presets attach after decoding")
    func sinkPresets() throws {
        let video = try receive(.video, "VP8", .preset(name: "null-video"))
        #expect(video.nodes.map(\.factory) == ["rtpvp8depay", "vp8dec", "videoconvert", "fakesink"])
        #expect(video.links.contains(PipelineLink(from: PadRef("rx_video_convert"), to: PadRef("rx_video_sink"))))
        let audio = try receive(.audio, "OPUS", .preset(name: "speaker"))
        #expect(audio.nodes.last?.factory == "autoaudiosink")
    }

    @Test("mismatched sinks, codecs and presets are refused")
    func refusals() {
        func failure(_ kind: MediaKind, _ encoding: String, _ sink: ReceiveSinkSpec) -> PipelineCompileError? {
            compileError { () throws(PipelineCompileError) in
                _ = try PipelineCompiler(catalog: Fixtures.software).compileReceive(kind: kind, encodingName: encoding, sink: sink, parameters: MediaParameters())
            }
        }
        if case .unsupportedReceive(.audio, "OPUS", _)? = failure(.audio, "OPUS", .renderer(name: "x")) {} else { Issue.record("audio renderer accepted") }
        if case .unsupportedReceive(.video, "VP8", _)? = failure(.video, "VP8", .playback) {} else { Issue.record("video playback accepted") }
        if case .videoCodecUnavailable("AV1", _, _)? = failure(.video, "AV1", .discard) {} else { Issue.record("AV1 accepted") }
        if case .unknownAudioCodec("PCMU", _)? = failure(.audio, "PCMU", .discard) {} else { Issue.record("PCMU accepted") }
        #expect(failure(.video, "VP8", .preset(name: "speaker")) == .presetKindMismatch(name: "speaker", expected: .videoSink, actual: .audioSink))
    }

    @Test("idPrefix names the nodes so two fragments can share a pipeline")
    func prefixes() throws {
        let first = try receive(.video, "VP8", .discard, prefix: "peer1")
        let second = try receive(.video, "VP8", .discard, prefix: "peer2")
        #expect(Set(first.nodes.map(\.id)).isDisjoint(with: Set(second.nodes.map(\.id))))
        #expect(first.entry.node == "peer1_depay")
    }

    @Test("fragment DOT names every node")
    func dot() throws {
        let fragment = try receive(.audio, "OPUS", .playback)
        for node in fragment.nodes { #expect(fragment.dot.contains("\"\(node.id)\" [label=")) }
        #expect(fragment.dot.contains("\"rx_audio_format\" -> \"speaker_mix\" [style=dashed"))
    }
}
