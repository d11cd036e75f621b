@testable import MediaPipeline
import Testing

@Suite("Unsupported asks throw clear errors")
struct CompileErrorTests {
    let compiler = PipelineCompiler(catalog: Fixtures.software)

    private func error(_ parameters: MediaParameters, catalog: StaticCatalog = Fixtures.software,
                       video: VideoInputs = .single(.testPattern()), audio: AudioSourceSpec = .testTone()) -> PipelineCompileError? {
        compileError { () throws(PipelineCompileError) in
            _ = try PipelineCompiler(catalog: catalog).compileSend(parameters: parameters, video: video, audio: audio)
        }
    }

    @Test("AV1 is refused because 1.22 has no RTP payloader for it")
    func av1() throws {
        let failure = try #require(error(MediaParameters(videoCodec: "AV1")))
        guard case .videoCodecUnavailable(let asked, _, let supported) = failure else { Issue.record("wrong case \(failure)"); return }
        #expect(asked == "AV1")
        #expect(supported == ["VP8", "VP9", "H264"])
        #expect(failure.description.contains("AV1") && failure.description.contains("payloader"))
    }

    @Test("iSAC is refused because GStreamer has no iSAC")
    func isac() throws {
        let failure = try #require(error(MediaParameters(audioCodec: "ISAC")))
        guard case .audioCodecUnavailable(let asked, _, _) = failure else { Issue.record("wrong case \(failure)"); return }
        #expect(asked == "ISAC")
        #expect(failure.description.contains("ISAC") && failure.description.contains("OPUS"))
    }

    @Test("unknown codec names list what is supported")
    func unknownCodecs() throws {
        let video = try #require(error(MediaParameters(videoCodec: "THEORA")))
        #expect(video == .unknownVideoCodec(asked: "THEORA", supported: ["VP8", "VP9", "H264"]))
        #expect(video.description.contains("THEORA") && video.description.contains("VP9"))
        let audio = try #require(error(MediaParameters(audioCodec: "G722")))
        #expect(audio == .unknownAudioCodec(asked: "G722", supported: ["OPUS"]))
    }

    @Test("codec names are case-insensitive")
    func caseInsensitiveCodecs() throws {
        let graph = try Fixtures.compile(MediaParameters(videoCodec: "h264", audioCodec: "opus"))
        #expect(graph.output(.video)?.encodingName == "H264")
        #expect(graph.output(.audio)?.encodingName == "OPUS")
    }

    @Test("odd, zero, negative and oversized video sizes are refused, naming the size",
          arguments: [(481, 640), (480, 641), (0, 640), (480, -2), (7682, 640)])
    func badSizes(width: Int, height: Int) throws {
        let failure = try #require(error(MediaParameters(videoWidth: width, videoHeight: height)))
        guard case .invalidVideoSize(let w, let h, _) = failure else { Issue.record("wrong case \(failure)"); return }
        #expect(w == width && h == height)
        #expect(failure.description.contains("\(width)x\(height)"))
    }

    @Test("odd width explains the 4:2:0 reason")
    func oddWidthReason() throws {
        let failure = try #require(error(MediaParameters(videoWidth: 481)))
        #expect(failure.description.contains("even") && failure.description.contains("4:2:0"))
    }

    @Test("frame rates outside 1…120 are refused", arguments: [-1, 121, 1000])
    func badFrameRates(fps: Int) throws {
        #expect(error(MediaParameters(videoFps: fps)) == .invalidFrameRate(asked: fps, allowed: 1...120))
    }

    @Test("negative bitrates are refused, naming the parameter and value")
    func negativeBitrates() throws {
        let video = try #require(error(MediaParameters(videoMaxBitrate: -5)))
        #expect(video == .invalidBitrate(parameter: "videoMaxBitrate", kbps: -5, allowed: 1...100_000))
        #expect(video.description.contains("videoMaxBitrate -5"))
        let audio = try #require(error(MediaParameters(audioStartBitrate: -1)))
        #expect(audio == .invalidBitrate(parameter: "audioStartBitrate", kbps: -1, allowed: 4...650))
        #expect(error(MediaParameters(audioStartBitrate: 2)) == .invalidBitrate(parameter: "audioStartBitrate", kbps: 2, allowed: 4...650))
    }

    @Test("a missing element names itself and its Debian package")
    func missingElement() throws {
        let failure = try #require(error(MediaParameters(), catalog: Fixtures.software.removing(["videobalance"])))
        #expect(failure == .missingElement(factory: "videobalance", package: "gstreamer1.0-plugins-good", purpose: "video mute (black frames)"))
        #expect(failure.description.contains("videobalance") && failure.description.contains("gstreamer1.0-plugins-good"))

        let noDSP = try #require(error(MediaParameters(), catalog: Fixtures.software.removing(["webrtcdsp"])))
        #expect(noDSP.description.contains("webrtcdsp") && noDSP.description.contains("gstreamer1.0-plugins-bad"))
        // Without audio processing webrtcdsp is not needed at all.
        #expect(error(MediaParameters(noAudioProcessing: true), catalog: Fixtures.software.removing(["webrtcdsp", "webrtcechoprobe"])) == nil)
    }

    @Test("no encoder for the codec lists every candidate with its package")
    func noEncoder() throws {
        let h264 = try #require(error(MediaParameters(videoCodec: "H264"), catalog: Fixtures.software.removing(["x264enc", "openh264enc"])))
        #expect(h264 == .noEncoderInstalled(codec: "H264", candidates: ["x264enc (gstreamer1.0-plugins-ugly)", "openh264enc (gstreamer1.0-plugins-bad)"]))
        let vp8 = try #require(error(MediaParameters(), catalog: Fixtures.software.removing(["vp8enc"])))
        #expect(vp8.description.contains("VP8") && vp8.description.contains("vp8enc"))
    }

    @Test("audio-only calls do not validate video parameters")
    func audioOnlyIgnoresVideo() {
        #expect(error(MediaParameters(videoCallEnabled: false, videoWidth: 481, videoCodec: "AV1")) == nil)
    }

    @Test("bad sources are refused, naming the problem")
    func badSources() throws {
        let pattern = try #require(error(MediaParameters(), video: .single(.testPattern(pattern: "plaid"))))
        #expect(pattern.description.contains("plaid") && pattern.description.contains("smpte"))
        let wave = try #require(error(MediaParameters(), audio: .testTone(wave: "hum")))
        #expect(wave.description.contains("hum"))
        #expect(error(MediaParameters(), video: .single(.camera(device: ""))) != nil)
        #expect(error(MediaParameters(), video: .single(.file(path: "", loop: false))) != nil)
        let preset = try #require(error(MediaParameters(), video: .single(.preset(name: "nope"))))
        guard case .unknownPreset(let name, let available) = preset else { Issue.record("wrong case \(preset)"); return }
        #expect(name == "nope" && available.contains("smpte-live") && !available.contains("tone-440"))
        #expect(error(MediaParameters(), video: .single(.preset(name: "tone-440")))
                == .presetKindMismatch(name: "tone-440", expected: .videoSource, actual: .audioSource))
    }

    @Test("caller-chosen element names must be valid and unique")
    func badNames() throws {
        let spaced = try #require(error(MediaParameters(), video: .single(.app(name: "my camera"))))
        guard case .invalidName("my camera", _) = spaced else { Issue.record("wrong case \(spaced)"); return }
        let clash = try #require(error(MediaParameters(), video: .single(.app(name: "video_mute"))))
        guard case .invalidName("video_mute", _) = clash else { Issue.record("wrong case \(clash)"); return }
    }
}
