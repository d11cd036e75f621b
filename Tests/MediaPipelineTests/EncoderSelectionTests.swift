@testable import MediaPipeline
import Testing

@Suite("Encoder selection")
struct EncoderSelectionTests {
    /// (hardware factory, codec) for every hardware encoder the compiler knows.
    static let hardwareCases: [(String, String)] = VideoEncoderProfile.hardware.map { ($0.factory, $0.codec.rawValue) }

    @Test("each hardware encoder is chosen when it is the one installed", arguments: hardwareCases)
    func picksInstalledHardware(factory: String, codec: String) throws {
        let graph = try Fixtures.compile(MediaParameters(videoCodec: codec), catalog: Fixtures.softwarePlus(factory))
        let encoder = try #require(graph.nodes(withRole: .videoEncoder).first)
        #expect(encoder.factory == factory)
        #expect(graph.decisions.contains { $0.contains("video encoder: \(factory) (hardware") })
        // The bitrate control names a real property of the encoder node with the initial value.
        let control = try #require(graph.videoBitrate)
        #expect(control.node == encoder.id)
        #expect(encoder[property: control.property] != nil)
    }

    @Test("hardware bitrate units: kbit/s for VA/VA-API/NVENC/QSV, bit/s for v4l2 and Jetson")
    func hardwareBitrateUnits() throws {
        func encoder(_ factory: String, _ codec: String) throws -> PipelineNode {
            let graph = try Fixtures.compile(MediaParameters(videoMaxBitrate: 800, videoCodec: codec), catalog: Fixtures.softwarePlus(factory))
            return try #require(graph.nodes(withRole: .videoEncoder).first)
        }
        for factory in ["vah264enc", "vaapih264enc", "nvh264enc", "qsvh264enc"] {
            #expect(try encoder(factory, "H264")[property: "bitrate"] == .uint(800), "\(factory)")
        }
        #expect(try encoder("nvv4l2h264enc", "H264")[property: "bitrate"] == .uint(800_000))
        guard case .structure(let controls)? = try encoder("v4l2h264enc", "H264")[property: "extra-controls"] else {
            Issue.record("v4l2h264enc has no extra-controls structure")
            return
        }
        #expect(controls.hasPrefix("controls,"))
        #expect(controls.contains("video_bitrate=800000"))
        #expect(controls.contains("h264_i_frame_period=60"))
    }

    @Test("runtime bitrate values are in each encoder's unit")
    func bitrateControlValues() throws {
        let vp8 = try #require(try Fixtures.compile(MediaParameters(videoCodec: "VP8")).videoBitrate)
        #expect(vp8.value(forKbps: 500) == .int(500_000))
        let x264 = try #require(try Fixtures.compile(MediaParameters(videoCodec: "H264")).videoBitrate)
        #expect(x264.value(forKbps: 500) == .uint(500))
        let v4l2 = try #require(try Fixtures.compile(MediaParameters(videoCodec: "H264"), catalog: Fixtures.softwarePlus("v4l2h264enc")).videoBitrate)
        #expect(v4l2.value(forKbps: 500) == .structure("controls,video_bitrate=500000"))
        let opus = try #require(try Fixtures.compile().audioBitrate)
        #expect(opus.value(forKbps: 24) == .int(24_000))
        #expect(opus.initialKbps == nil)
    }

    @Test("higher registry rank wins; equal ranks follow the fixed preference")
    func rankThenPreference() throws {
        let ranked = Fixtures.software.adding([CatalogEntry(name: "vah264enc", rank: 0, klass: "Codec/Encoder/Video/Hardware"),
                                               CatalogEntry(name: "nvh264enc", rank: 257, klass: "Codec/Encoder/Video/Hardware")])
        let byRank = try Fixtures.compile(MediaParameters(videoCodec: "H264"), catalog: ranked)
        #expect(byRank.nodes(withRole: .videoEncoder).first?.factory == "nvh264enc")
        #expect(byRank.decisions.contains { $0.contains("nvh264enc (hardware, rank 257)") && $0.contains("also installed: vah264enc (rank 0)") })

        let tied = Fixtures.software.adding([CatalogEntry(name: "vaapih264enc", rank: 256, klass: "Codec/Encoder/Video/Hardware"),
                                             CatalogEntry(name: "vah264enc", rank: 256, klass: "Codec/Encoder/Video/Hardware")])
        #expect(try Fixtures.compile(MediaParameters(videoCodec: "H264"), catalog: tied).nodes(withRole: .videoEncoder).first?.factory == "vah264enc")
    }

    @Test("no hardware installed: software, with a decision line saying it fell back", arguments: ["VP8", "VP9", "H264"])
    func fallsBackToSoftware(codec: String) throws {
        let graph = try Fixtures.compile(MediaParameters(videoCodec: codec))
        let expected = ["VP8": "vp8enc", "VP9": "vp9enc", "H264": "x264enc"][codec]!
        #expect(graph.nodes(withRole: .videoEncoder).first?.factory == expected)
        let line = try #require(graph.decisions.first { $0.hasPrefix("video encoder:") })
        #expect(line.contains("falling back to software"))
        let candidates = VideoEncoderProfile.hardware.filter { $0.codec.rawValue == codec }.map(\.factory)
        for candidate in candidates { #expect(line.contains(candidate)) }
    }

    @Test("hardware acceleration off never picks hardware, even when all of it is installed", arguments: ["VP8", "VP9", "H264"])
    func hardwareOffIgnoresHardware(codec: String) throws {
        let graph = try Fixtures.compile(MediaParameters(videoCodec: codec, videoCodecHwAcceleration: false), catalog: Fixtures.hardware)
        let encoder = try #require(graph.nodes(withRole: .videoEncoder).first)
        #expect(!Fixtures.allHardwareEncoders.contains(encoder.factory))
        #expect(graph.decisions.contains { $0.contains("hardware acceleration off") && $0.contains("installed but unused") })
    }

    @Test("the Jetson encoder is skipped without nvvidconv, and gets it in front when present")
    func jetsonNeedsUpload() throws {
        let withoutUpload = Fixtures.software.adding([CatalogEntry(name: "nvv4l2h264enc", rank: 256, klass: "Codec/Encoder/Video/Hardware")])
        let skipped = try Fixtures.compile(MediaParameters(videoCodec: "H264"), catalog: withoutUpload)
        #expect(skipped.nodes(withRole: .videoEncoder).first?.factory == "x264enc")
        #expect(skipped.decisions.contains { $0.contains("nvv4l2h264enc skipped: it needs nvvidconv") && $0.contains("falling back") })

        let jetson = try Fixtures.compile(MediaParameters(videoCodec: "H264"), catalog: Fixtures.softwarePlus("nvv4l2h264enc"))
        let factories = jetson.factories
        let upload = try #require(factories.firstIndex(of: "nvvidconv"))
        #expect(factories[upload + 1] == "capsfilter" && factories[upload + 2] == "nvv4l2h264enc")
        #expect(jetson.nodes[upload + 1][property: "caps"] == .caps("video/x-raw(memory:NVMM),format=NV12"))
    }

    @Test("openh264enc is used when x264enc is missing, with its bitrate in bit/s")
    func openh264Fallback() throws {
        let graph = try Fixtures.compile(MediaParameters(videoMaxBitrate: 1500, videoCodec: "H264"), catalog: Fixtures.software.removing(["x264enc"]))
        let encoder = try #require(graph.nodes(withRole: .videoEncoder).first)
        #expect(encoder.factory == "openh264enc")
        #expect(encoder[property: "bitrate"] == .uint(1_500_000))
        #expect(graph.decisions.contains { $0.contains("x264enc is not installed (gstreamer1.0-plugins-ugly)") })
    }
}
