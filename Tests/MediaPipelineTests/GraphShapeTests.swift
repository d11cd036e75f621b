@testable import MediaPipeline
import Testing

@Suite("Send graph shape")
struct GraphShapeTests {
    @Test("every link and output refers to nodes of the graph, and names are unique")
    func integrity() throws {
        let graphs = [try Fixtures.compile(), try Fixtures.compile(MediaParameters(videoCodec: "H264"), catalog: Fixtures.hardware),
                      try Fixtures.compile(MediaParameters(videoCallEnabled: false)),
                      try Fixtures.compile(video: .cameras(front: .testPattern(), back: .preset(name: "ball")))]
        for graph in graphs {
            let ids = Set(graph.nodes.map(\.id))
            #expect(ids.count == graph.nodes.count)
            for link in graph.links { #expect(ids.contains(link.from.node) && ids.contains(link.to.node)) }
            for output in graph.outputs { #expect(ids.contains(output.node)) }
        }
    }

    @Test("the default graph is VP8 + Opus with exact RTP caps for webrtcbin")
    func defaultOutputs() throws {
        let graph = try Fixtures.compile()
        #expect(graph.outputs.map(\.rtpCaps) == [
            "application/x-rtp,media=video,encoding-name=VP8,payload=96,clock-rate=90000",
            "application/x-rtp,media=audio,encoding-name=OPUS,payload=111,clock-rate=48000",
        ])
        #expect(graph.node("video_pay")?[property: "pt"] == .uint(96))
        #expect(graph.node("video_pay")?[property: "picture-id-mode"] == .enumNick("15-bit"))
        #expect(graph.node("audio_pay")?[property: "pt"] == .uint(111))
        #expect(graph.node("video_caps")?[property: "caps"] == .caps("video/x-raw,width=480,height=640,framerate=30/1,pixel-aspect-ratio=1/1"))
    }

    @Test("video runs source → convert → scale → rate → caps → mute → queue → encoder → payloader")
    func videoOrder() throws {
        let graph = try Fixtures.compile()
        #expect(Array(graph.factories.prefix(9)) == ["videotestsrc", "videoconvert", "videoscale", "videorate", "capsfilter", "videobalance",
                                                     "queue", "vp8enc", "rtpvp8pay"])
        let queue = try #require(graph.nodes(withRole: .videoEncoderQueue).first)
        #expect(queue[property: "leaky"] == .enumNick("downstream"))
        #expect(queue[property: "max-size-buffers"] == .uint(2))
    }

    @Test("VP8 encoder settings: real-time, CBR, no lookahead, no extra threads, bitrate in bit/s")
    func vp8Settings() throws {
        let encoder = try #require(try Fixtures.compile(MediaParameters(videoMaxBitrate: 800)).node("video_encoder"))
        #expect(encoder[property: "target-bitrate"] == .int(800_000))
        #expect(encoder[property: "deadline"] == .int(1))
        #expect(encoder[property: "cpu-used"] == .int(-6))
        #expect(encoder[property: "end-usage"] == .enumNick("cbr"))
        #expect(encoder[property: "lag-in-frames"] == .int(0))
        #expect(encoder[property: "keyframe-max-dist"] == .int(60))
        #expect(encoder[property: "threads"] == nil)
    }

    @Test("H.264 via x264: bitrate in kbit/s, constrained baseline, parser, zero-latency payloader")
    func h264Settings() throws {
        let graph = try Fixtures.compile(MediaParameters(videoMaxBitrate: 1500, videoCodec: "H264"))
        let encoder = try #require(graph.node("video_encoder"))
        #expect(encoder.factory == "x264enc")
        #expect(encoder[property: "bitrate"] == .uint(1500))
        #expect(encoder[property: "tune"] == .enumNick("zerolatency"))
        #expect(encoder[property: "bframes"] == .uint(0))
        #expect(graph.node("video_encoded_caps")?[property: "caps"] == .caps("video/x-h264,profile=constrained-baseline"))
        #expect(graph.node("video_parse")?.factory == "h264parse")
        #expect(graph.node("video_pay")?[property: "config-interval"] == .int(-1))
        #expect(graph.node("video_pay")?[property: "aggregate-mode"] == .enumNick("zero-latency"))
    }

    @Test("keyframe interval is two seconds of frames")
    func keyframeInterval() throws {
        let graph = try Fixtures.compile(MediaParameters(videoFps: 15))
        #expect(graph.node("video_encoder")?[property: "keyframe-max-dist"] == .int(30))
        #expect(graph.node("video_caps")?[property: "caps"] == .caps("video/x-raw,width=480,height=640,framerate=15/1,pixel-aspect-ratio=1/1"))
    }

    @Test("audio-only graphs have no video node, output or control")
    func audioOnly() throws {
        let graph = try Fixtures.compile(MediaParameters(videoCallEnabled: false))
        #expect(graph.outputs.map(\.kind) == [.audio])
        #expect(!graph.factories.contains { $0.hasPrefix("video") || $0.hasPrefix("vp") || $0.contains("264") })
        #expect(!graph.nodes.contains { node in
            switch node.role {
            case .videoSource, .videoSelector, .videoFormat, .videoMute, .videoEncoderQueue, .videoEncoder, .videoPayloader: true
            default: false
            }
        })
        #expect(graph.videoBitrate == nil && graph.videoMute == nil && graph.cameraSwitch == nil)
        #expect(graph.decisions.contains { $0.contains("videoCallEnabled=false") })
    }

    @Test("audio processing: webrtcdsp with AEC and NS, the echo probe it names, and the speaker mixer")
    func audioProcessingOn() throws {
        let graph = try Fixtures.compile()
        let dsp = try #require(graph.nodes(withRole: .audioProcessing).first)
        #expect(dsp.factory == "webrtcdsp")
        #expect(dsp[property: "echo-cancel"] == .bool(true))
        #expect(dsp[property: "noise-suppression"] == .bool(true))
        #expect(dsp[property: "gain-control"] == .bool(true))
        let probe = try #require(graph.nodes(withRole: .echoProbe).first)
        #expect(dsp[property: "probe"] == .string(probe.id))
        #expect(graph.speakerInput == PadRef("speaker_mix"))
        #expect(graph.node("speaker_sink")?.factory == "autoaudiosink")
        // ignore-inactive-pads made the mixer push EOS at startup about once in 20 loaded runs.
        let mixer = try #require(graph.node("speaker_mix"))
        #expect(mixer[property: "ignore-inactive-pads"] == nil)
        #expect(mixer[property: "min-upstream-latency"] == .uint(200_000_000))
        // The dsp sits between the caps and the mute.
        let factories = graph.factories
        let dspIndex = try #require(factories.firstIndex(of: "webrtcdsp"))
        #expect(factories[dspIndex + 1] == "volume")
    }

    @Test("noAudioProcessing removes webrtcdsp, the echo probe and the speaker chain")
    func noAudioProcessing() throws {
        let graph = try Fixtures.compile(MediaParameters(noAudioProcessing: true))
        #expect(!graph.factories.contains("webrtcdsp"))
        #expect(!graph.factories.contains("webrtcechoprobe"))
        #expect(graph.speakerInput == nil)
        #expect(graph.decisions.contains { $0.contains("noAudioProcessing=true") })
    }

    @Test("AEC off keeps noise suppression but drops the echo probe; NS off is passed through")
    func aecAndNsSwitches() throws {
        let noAEC = try Fixtures.compile(MediaParameters(disableBuiltInAEC: true))
        let dsp = try #require(noAEC.node("audio_dsp"))
        #expect(dsp[property: "echo-cancel"] == .bool(false))
        #expect(dsp[property: "probe"] == nil)
        #expect(!noAEC.factories.contains("webrtcechoprobe"))
        let noNS = try Fixtures.compile(MediaParameters(disableBuiltInNS: true))
        #expect(noNS.node("audio_dsp")?[property: "noise-suppression"] == .bool(false))
        #expect(noNS.node("audio_dsp")?[property: "echo-cancel"] == .bool(true))
    }

    @Test("speakerphone off plays far-end audio on the earpiece output, the echo probe still hearing it")
    func speakerphoneOff() throws {
        let graph = try Fixtures.compile(MediaParameters(useSpeakerPhone: false))
        #expect(graph.node("speaker_sink")?.factory == "autoaudiosink" && graph.node("speaker_sink")?.role == .speakerSink)
        var headset = MediaParameters(useSpeakerPhone: false)
        headset.earpieceSink = "audioconvert ! audio/x-raw,channels=1 ! pulsesink device=headset"
        let routed = try Fixtures.compile(headset)
        #expect(routed.node("speaker_sink")?.factory == "audioconvert" && routed.node("speaker_sink2")?.factory == "pulsesink")
        #expect(routed.node("speaker_sink2")?[property: "device"] == .serialized("headset"))
        #expect(routed.links.contains(PipelineLink(from: PadRef("speaker_resample"), to: PadRef("speaker_sink"))))
        var malformed = MediaParameters(useSpeakerPhone: false)
        malformed.earpieceSink = "pulsesink name=evil"
        #expect(throws: PipelineCompileError.self) { try Fixtures.compile(malformed) }
    }

    @Test("Opus: bitrate in bit/s only when asked, FEC, 20 ms voice frames")
    func opusSettings() throws {
        let defaulted = try #require(try Fixtures.compile().node("audio_encoder"))
        #expect(defaulted[property: "bitrate"] == nil)
        #expect(defaulted[property: "inband-fec"] == .bool(true))
        #expect(defaulted[property: "frame-size"] == .enumNick("20"))
        #expect(defaulted[property: "audio-type"] == .enumNick("voice"))
        let asked = try #require(try Fixtures.compile(MediaParameters(audioStartBitrate: 32)).node("audio_encoder"))
        #expect(asked[property: "bitrate"] == .int(32_000))
    }

    @Test("front and back cameras feed an input-selector; the initial one is on sink_0")
    func frontAndBack() throws {
        let graph = try Fixtures.compile(video: .cameras(front: .camera(device: "/dev/video0"), back: .camera(device: "/dev/video2")))
        let selector = try #require(graph.nodes(withRole: .videoSelector).first)
        #expect(selector.factory == "input-selector")
        #expect(graph.cameraSwitch == CameraSwitch(selector: selector.id, pads: ["front": "sink_0", "back": "sink_1"], initial: "front"))
        #expect(graph.links.contains(PipelineLink(from: PadRef("front_caps"), to: PadRef(selector.id, pad: "sink_0"))))
        #expect(graph.links.contains(PipelineLink(from: PadRef("back_caps"), to: PadRef(selector.id, pad: "sink_1"))))
        #expect(graph.node("front_src")?[property: "device"] == .string("/dev/video0"))
        #expect(graph.nodes(withRole: .videoSource("back")).first?.factory == "v4l2src")
        #expect(graph.links.contains(PipelineLink(from: PadRef(selector.id), to: PadRef("video_mute"))))

        let backFirst = try Fixtures.compile(video: .cameras(front: .testPattern(), back: .testPattern(pattern: "ball"), initial: .back))
        #expect(backFirst.cameraSwitch?.pads == ["back": "sink_0", "front": "sink_1"])
        #expect(backFirst.cameraSwitch?.initial == "back")
    }

    @Test("one video source has no selector")
    func singleSourceNoSelector() throws {
        let graph = try PipelineCompiler(catalog: Fixtures.software).compileSend(parameters: MediaParameters(), video: .testPattern(pattern: "ball"))
        #expect(graph.node("video_src")?[property: "pattern"] == .enumNick("ball"))
        #expect(!graph.factories.contains("input-selector"))
        #expect(graph.cameraSwitch == nil)
    }

    @Test("mute controls name the videobalance and volume nodes with black/silence values")
    func muteControls() throws {
        let graph = try Fixtures.compile()
        let video = try #require(graph.videoMute)
        #expect(graph.node(video.node)?.factory == "videobalance")
        #expect(video.muted.contains(NodeProperty("contrast", .double(0))))
        #expect(video.muted.contains(NodeProperty("saturation", .double(0))))
        #expect(graph.node(video.node)?.properties == video.unmuted)
        let audio = try #require(graph.audioMute)
        #expect(graph.node(audio.node)?.factory == "volume")
        #expect(audio.muted == [NodeProperty("mute", .bool(true))])
    }

    @Test("file, app and device sources")
    func otherSources() throws {
        let file = try Fixtures.compile(video: .single(.file(path: "/tmp/clip one.mkv", loop: true)), audio: .file(path: "/tmp/clip one.mkv", loop: false))
        #expect(file.fileLoops == [FileLoop(kind: .video, source: "video_src", decoder: "video_decode", seekTarget: "video_sync")])
        #expect(file.links.contains(PipelineLink(from: PadRef("video_decode"), to: PadRef("video_sync"), dynamicSourcePad: .video)))
        #expect(file.launchDescription.contains("filesrc name=video_src location=\"/tmp/clip one.mkv\" ! decodebin name=video_decode ! clocksync name=video_sync"))

        let app = try Fixtures.compile(video: .single(.app(name: "camera")), audio: .app(name: "mic"))
        let appsrc = try #require(app.node("camera"))
        #expect(appsrc.factory == "appsrc" && appsrc.role == .videoSource("front"))
        #expect(appsrc[property: "format"] == .enumNick("time"))
        #expect(appsrc[property: "is-live"] == .bool(true))
        #expect(appsrc[property: "do-timestamp"] == .bool(false))
        #expect(appsrc[property: "caps"] == .caps("video/x-raw,format=I420,width=480,height=640,framerate=30/1"))
        #expect(app.node("mic")?[property: "caps"] == .caps(AudioSourceBuilder.rawCaps))

        let pulse = try Fixtures.compile(audio: .device("alsa_input.usb"))
        #expect(pulse.node("audio_src")?.factory == "pulsesrc")
        #expect(pulse.node("audio_src")?[property: "device"] == .string("alsa_input.usb"))
        let alsa = try Fixtures.compile(catalog: Fixtures.software.removing(["pulsesrc"]), audio: .device(""))
        #expect(alsa.node("audio_src")?.factory == "alsasrc")
        #expect(alsa.node("audio_src")?[property: "device"] == nil)
        #expect(alsa.decisions.contains { $0.contains("pulsesrc is not installed") })
    }

    @Test("tracing is carried into the graph")
    func tracing() throws {
        #expect(try Fixtures.compile(MediaParameters(tracing: true)).tracing)
        #expect(try !Fixtures.compile().tracing)
    }

    @Test("DOT output has every node, every link and the webrtcbin outputs")
    func dot() throws {
        let graph = try Fixtures.compile(video: .cameras(front: .testPattern(), back: .testPattern(pattern: "ball")))
        let dot = graph.dot
        #expect(dot.hasPrefix("digraph \"send\" {"))
        for node in graph.nodes {
            #expect(dot.contains("\"\(node.id)\" [label=\"\(node.id)\\n\(node.factory)"), "\(node.id) missing from DOT")
        }
        for link in graph.links { #expect(dot.contains("\"\(link.from.node)\" -> \"\(link.to.node)\"")) }
        #expect(dot.contains("\"video_pay\" -> \"webrtcbin\" [style=dashed, label=\"application/x-rtp,media=video"))
        #expect(dot.contains("sink_1"))
    }

    @Test("decisions explain the defaults that were applied")
    func decisionsExplainDefaults() throws {
        let decisions = try Fixtures.compile().decisions
        #expect(decisions.contains("video: 480x640 at 30 fps (videoFps 0 → default 30)"))
        #expect(decisions.contains("video bitrate: 800 kbit/s (videoMaxBitrate 0 → default for 307200 pixels)"))
        #expect(decisions.contains { $0.hasPrefix("audio encoder: opusenc, encoder default bitrate") })
    }
}
