import BenchmarkSupport
import MediaPipeline
import MediaRuntime

/// The software encoders the benchmarks compare, and the catalog that makes the compiler pick each.
enum EncoderChoice: String, CaseIterable, Sendable {
    case vp8, vp9, x264, openh264

    var codec: String {
        switch self {
        case .vp8: "VP8"
        case .vp9: "VP9"
        case .x264, .openh264: "H264"
        }
    }

    var factory: String { self == .vp8 ? "vp8enc" : self == .vp9 ? "vp9enc" : self == .x264 ? "x264enc" : "openh264enc" }

    /// openh264enc only wins when x264enc is absent, so its catalog leaves x264enc out.
    var catalog: any ElementCatalog {
        self == .openh264 ? StaticCatalog(LiveCatalog.shared.entries).removing(["x264enc"]) : LiveCatalog.shared
    }

    var isInstalled: Bool { LiveCatalog.shared.contains(factory) }
}

/// Where the benchmark's raw frames come from.
enum BenchSource: Sendable {
    /// videotestsrc at 30 fps, paced by the clock like a camera.
    case live
    /// videotestsrc as fast as the encoder takes frames.
    case nonLive
    /// An appsrc the benchmark feeds from a raw file.
    case app(name: String)

    var label: String {
        switch self {
        case .live: "live"
        case .nonLive: "non-live"
        case .app: "appsrc"
        }
    }
}

/// A compiled send graph reduced to what an encode benchmark runs: the video branch exactly as
/// `PipelineCompiler` emits it (source, conversion, mute, leaky queue, encoder, parser,
/// payloader), its payloader ending in a `fakesink`. The only changes, all at the source and
/// queue: a moving test pattern, a frame count, and for non-live runs a blocking queue.
struct BenchGraph: Sendable {
    static let pattern = "smpte"
    /// Pixels the pattern moves per frame, so the encoder sees motion; the frames stay identical between runs.
    static let horizontalSpeed = 4
    static let sinkName = "bench_sink"
    static let packetTap = "bench_packets"

    let graph: PipelineGraph
    let encoderNode: String
    /// Where the frame's RTP packets are seen one by one: the payloader, or the identity after it.
    let packetNode: String
    let encoder: EncoderChoice

    init(encoder: EncoderChoice, width: Int, height: Int, kbps: Int, source: BenchSource, frames: Int) throws {
        let parameters = MediaParameters(videoWidth: width, videoHeight: height, videoFps: 30, videoMaxBitrate: kbps,
                                           videoCodec: encoder.codec, videoCodecHwAcceleration: false, noAudioProcessing: true)
        let video: VideoSourceSpec
        switch source {
        case .live: video = .testPattern(pattern: Self.pattern, live: true)
        case .nonLive: video = .testPattern(pattern: Self.pattern, live: false)
        case .app(let name): video = .app(name: name)
        }
        var graph = try PipelineCompiler(catalog: encoder.catalog).compileSend(parameters: parameters, video: .single(video), audio: .silence)
        guard let output = graph.output(.video) else { throw BenchmarkError.failed("the compiled graph has no video output") }

        // Keep the video branch: every node upstream of the video payloader.
        var keep: Set<String> = [output.node]
        var grew = true
        while grew {
            let before = keep.count
            for link in graph.links where keep.contains(link.to.node) { keep.insert(link.from.node) }
            grew = keep.count != before
        }
        graph.nodes = graph.nodes.filter { keep.contains($0.id) }
        graph.links = graph.links.filter { keep.contains($0.from.node) && keep.contains($0.to.node) }
        graph.outputs = graph.outputs.filter { $0.kind == .video }
        graph.audioBitrate = nil
        graph.audioMute = nil
        graph.speakerInput = nil
        graph.fileLoops = []

        guard let encoderNode = graph.nodes(withRole: .videoEncoder).first else { throw BenchmarkError.failed("no video encoder in the graph") }
        guard encoderNode.factory == encoder.factory else {
            throw BenchmarkError.failed("the compiler chose \(encoderNode.factory) for \(encoder.codec), not \(encoder.factory)")
        }
        for index in graph.nodes.indices {
            switch graph.nodes[index].role {
            case .videoSource where graph.nodes[index].factory == "videotestsrc":
                graph.nodes[index].setting("horizontal-speed", .int(Self.horizontalSpeed))
                graph.nodes[index].setting("num-buffers", .int(frames))
            case .videoEncoderQueue:
                // Non-live: every frame is encoded, the source waits for the encoder instead of
                // producing frames the leaky queue would throw away (which would also make the
                // encoded frames differ between runs).
                if case .nonLive = source { graph.nodes[index].setting("leaky", .enumNick("no")) }
            default:
                break
            }
        }
        var last = output.node
        if case .app = source {
            // rtpvp8pay pushes each frame's packets as one buffer list, which buffer probes do not
            // see; a passthrough identity after it pushes them one by one, so a probe on its src
            // pad sees when the frame's last packet is out.
            graph.nodes.append(PipelineNode(id: Self.packetTap, factory: "identity", properties: [NodeProperty("silent", .bool(true))]))
            graph.links.append(PipelineLink(from: PadRef(last), to: PadRef(Self.packetTap)))
            last = Self.packetTap
        }
        graph.nodes.append(PipelineNode(id: Self.sinkName, factory: "fakesink", properties: [NodeProperty("sync", .bool(false))]))
        graph.links.append(PipelineLink(from: PadRef(last), to: PadRef(Self.sinkName)))

        self.graph = graph
        self.encoderNode = encoderNode.id
        self.packetNode = last == Self.packetTap ? last : output.node
        self.encoder = encoder
    }

    /// The encoder's compiled properties, e.g. `deadline=1 cpu-used=-6 …`.
    var encoderSettings: String {
        graph.node(encoderNode).map { node in node.properties.map { "\($0.name)=\($0.value.launchText)" }.joined(separator: " ") } ?? ""
    }

    /// The same graph as gst-launch-1.0 text.
    var launchLine: String { graph.launchDescription(testRun: false) }
}

extension PipelineNode {
    /// Sets or replaces a property (the compiler's own setter is internal to MediaPipeline).
    mutating func setting(_ name: String, _ value: PropertyValue) {
        if let index = properties.firstIndex(where: { $0.name == name }) {
            properties[index].value = value
        } else {
            properties.append(NodeProperty(name, value))
        }
    }
}
