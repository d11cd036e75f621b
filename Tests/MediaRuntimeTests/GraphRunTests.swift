import Foundation
import GLibCore
import GStreamer
import MediaPipeline
import MediaRuntime
import Testing

/// Compiled graphs run for real through the runtime (not just as text), and each encoder's bitrate
/// lands in its own unit: proven by measuring what it produces.
@Suite(.serialized) struct GraphRunTests {
    init() { try? GStreamerRuntime.ensureInitialized() }

    /// Materialises `graph`, ends each output in a fakesink and counts buffers leaving the encoders.
    private func run(_ graph: PipelineGraph, until frames: Int, timeout: Duration = .seconds(20))
        async throws -> (video: Int, audio: Int, videoBytes: Int, videoSpan: UInt64) {
        let pipeline = Pipeline(name: "graph-run")
        let media = try SendMedia(graph: graph, into: pipeline)
        for output in graph.outputs {
            let sink = try Element(factory: "fakesink", name: "\(output.kind.rawValue)_out")
            try sink.set("sync", false)
            try pipeline.add(sink)
            let source = try #require(media.output(output.kind))
            try source.element.link(pad: source.pad, to: sink, pad: nil)
        }
        let counts = Locked((video: 0, audio: 0, bytes: 0, first: UInt64?.none, last: UInt64(0)))
        var probes: [PadProbe] = []
        for (role, isVideo) in [(NodeRole.videoEncoder, true), (.audioEncoder, false)] {
            guard let node = graph.nodes(withRole: role).first, let pad = media.elements.elements[node.id]?.staticPad("src") else { continue }
            probes.append(pad.addBufferProbe { info, _ in
                counts.withLock { state in
                    if isVideo {
                        state.video += 1
                        state.bytes += info.size
                        if let pts = info.pts { state.first = state.first ?? pts; state.last = max(state.last, pts) }
                    } else {
                        state.audio += 1
                    }
                }
                return .pass
            })
        }
        try await pipeline.play()
        let needsVideo = !graph.nodes(withRole: .videoEncoder).isEmpty
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let state = counts.value
            if (needsVideo ? state.video : state.audio) >= frames { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        pipeline.stop()
        probes.forEach { $0.cancel() }
        let state = counts.value
        return (state.video, state.audio, state.bytes, state.last - (state.first ?? state.last))
    }

    static let matrix: [(String, Bool, Bool)] = [
        ("VP8", true, true), ("VP8", true, false), ("VP9", true, true), ("H264", true, true), ("H264", true, false),
        ("VP8", false, true), ("VP8", false, false),
    ]

    /// Every software graph of the golden matrix encodes at least 60 frames through the runtime.
    @Test(arguments: 0..<matrix.count)
    func softwareGraphRunsForReal(index: Int) async throws {
        let (codec, video, processing) = Self.matrix[index]
        let parameters = MediaParameters(videoCallEnabled: video, videoWidth: 320, videoHeight: 240, videoCodec: codec,
                                           videoCodecHwAcceleration: false, noAudioProcessing: !processing)
        let graph = try PipelineCompiler(catalog: LiveCatalog.shared).compileSend(parameters: parameters)
        let result = try await run(graph, until: 60)
        if video { #expect(result.video >= 60, "\(codec) encoded \(result.video) frames") }
        #expect(result.audio >= (video ? 20 : 60), "opus frames: \(result.audio)")
    }

    /// The target bitrate reaches each software encoder in its own unit: measured over 5 s of
    /// content it lands within ±25 % of what was asked.
    @Test(arguments: [("vp8enc", "VP8", 600), ("vp9enc", "VP9", 600), ("x264enc", "H264", 600), ("openh264enc", "H264", 600)])
    func measuredBitrateMatchesTheTarget(encoder: String, codec: String, kbps: Int) async throws {
        var catalog = StaticCatalog(LiveCatalog.shared.entries)
        if encoder == "openh264enc" { catalog = catalog.removing(["x264enc"]) }
        let scrolling = try Preset.parse(name: "scrolling", text: "# kind: video-source\nvideotestsrc is-live=false pattern=smpte horizontal-speed=4\n")
        let compiler = PipelineCompiler(catalog: catalog, presets: PresetLibrary.builtIn.overriding(with: [scrolling]))
        let parameters = MediaParameters(videoWidth: 640, videoHeight: 480, videoMaxBitrate: kbps, videoCodec: codec,
                                           videoCodecHwAcceleration: false, noAudioProcessing: true)
        var graph = try compiler.compileSend(parameters: parameters, video: .single(.preset(name: "scrolling")), audio: .silence)
        #expect(graph.nodes(withRole: .videoEncoder).first?.factory == encoder)
        // Non-live: the encoder's rate control follows timestamps, so 5 s of content takes less.
        graph.nodes = graph.nodes.map { node in
            guard node.role == .videoEncoderQueue else { return node }
            var blocking = node
            blocking.properties.removeAll { $0.name == "leaky" }
            return blocking
        }
        let result = try await run(graph, until: 150, timeout: .seconds(40))
        let seconds = Double(result.videoSpan) / 1e9
        try #require(seconds > 4)
        let measured = Double(result.videoBytes) * 8 / seconds / 1000
        #expect(abs(measured - Double(kbps)) <= 0.25 * Double(kbps), "\(encoder): asked \(kbps) kbit/s, produced \(Int(measured))")
    }

    /// Lowering the video bitrate while the graph runs measurably lowers what the encoder produces.
    @Test func runtimeBitrateChangeLowersTheOutput() async throws {
        let scrolling = try Preset.parse(name: "scrolling", text: "# kind: video-source\nvideotestsrc is-live=true pattern=smpte horizontal-speed=4\n")
        let compiler = PipelineCompiler(catalog: LiveCatalog.shared, presets: PresetLibrary.builtIn.overriding(with: [scrolling]))
        let graph = try compiler.compileSend(parameters: MediaParameters(videoWidth: 320, videoHeight: 240, videoMaxBitrate: 1000,
                                                                           noAudioProcessing: true),
                                             video: .single(.preset(name: "scrolling")), audio: .silence)
        let pipeline = Pipeline(name: "bitrate-change")
        let media = try SendMedia(graph: graph, into: pipeline)
        for output in graph.outputs {
            let sink = try Element(factory: "fakesink")
            try pipeline.add(sink)
            let source = try #require(media.output(output.kind))
            try source.element.link(pad: source.pad, to: sink, pad: nil)
        }
        let bytes = Locked(0)
        let encoder = try #require(graph.nodes(withRole: .videoEncoder).first)
        let probe = try #require(media.elements.elements[encoder.id]?.staticPad("src")).addBufferProbe { info, _ in
            bytes.withLock { $0 += info.size }
            return .pass
        }
        try await pipeline.play()
        try await Task.sleep(for: .seconds(1))
        bytes.withLock { $0 = 0 }
        try await Task.sleep(for: .seconds(2))
        let high = bytes.value
        try media.setVideoBitrate(kbps: 150)
        try await Task.sleep(for: .seconds(1))
        bytes.withLock { $0 = 0 }
        try await Task.sleep(for: .seconds(2))
        let low = bytes.value
        probe.cancel()
        pipeline.stop()
        #expect(Double(low) < Double(high) * 0.5, "bytes per 2 s: \(high) at 1000 kbit/s, \(low) at 150 kbit/s")
        #expect(throws: MediaRuntimeError.self) { try media.setVideoBitrate(kbps: 0) }
    }
}
