import BenchmarkSupport
import Foundation

/// Section 1: per-frame encode latency for every encoder, size, bitrate and source mode.
struct EncodeSuite {
    struct Size: Sendable {
        var width: Int
        var height: Int
        /// The SDK's default budget for the size (`VideoBitrateDefaults`) and a higher one.
        var bitrates: [Int]
    }

    static let sizes = [Size(width: 320, height: 240, bitrates: [300, 600]),
                        Size(width: 640, height: 480, bitrates: [800, 1600]),
                        Size(width: 1280, height: 720, bitrates: [1700, 3000])]

    var encoders: [EncoderChoice]
    var sizes: [Size]
    var frames: Int
    var sources: [BenchSource] = [.live, .nonLive]

    static let method = """
        Each figure is one run of the SDK's compiled send graph (`PipelineCompiler.compileSend`, video branch only) materialised by \
        `SendMedia`, its payloader ending in a `fakesink`. Source: `videotestsrc pattern=smpte horizontal-speed=4` (identical frames \
        every run), live at 30 fps or non-live (as fast as the encoder takes frames; the encoder queue is made blocking so every frame \
        is encoded). Latency: pad probes on the encoder's sink and src pads, matched by PTS, CLOCK_MONOTONIC; p50/p95/p99 are \
        nearest-rank percentiles over every encoded frame (the first keyframe included). Tracer p50: GStreamer's latency tracer \
        (`element-latency` of the encoder), a cross-check. fps: encoded frames per second of wall time, non-live only. \
        CPU ms/frame: getrusage user+sys of the whole process from PLAYING to end-of-stream (source, conversion, encoder, payloader, \
        probes, tracer) divided by the encoded frames. Frames: encoded/produced (a live run drops frames only if the encoder falls \
        behind: the SDK's queue in front of it is leaky; videorate may add one frame at end-of-stream, hence 301/300; openh264enc \
        skips frames by design to hold its bitrate, `enable-frame-skip`).
        """

    func run(log: (String) -> Void) async throws -> EncodeSection {
        let timer = SectionTimer()
        var figures: [EncodeFigure] = []
        let plan = sources.flatMap { source in sizes.flatMap { size in encoders.flatMap { encoder in size.bitrates.map { (source, size, encoder, $0) } } } }
        for (index, (source, size, encoder, kbps)) in plan.enumerated() {
            let bench = try BenchGraph(encoder: encoder, width: size.width, height: size.height, kbps: kbps, source: source, frames: frames)
            let outcome = try await InProcessRun(bench: bench, timeout: .seconds(Double(frames) / 10 + 60)).run()
            let encoded = outcome.frames.encode.count
            var fps: Double?
            if case .nonLive = source, let first = outcome.frames.firstIn, let last = outcome.frames.lastOut, last > first {
                fps = Double(encoded) / (Double(last - first) / 1e9)
            }
            let figure = EncodeFigure(
                codec: encoder.codec, encoder: encoder.factory, width: size.width, height: size.height, kbps: kbps,
                source: source.label, framesOffered: frames, framesEncoded: encoded,
                latency: LatencySummary(nanoseconds: outcome.frames.encode), tracer: LatencySummary(nanoseconds: outcome.tracer),
                sustainedFps: fps, cpuMsPerFrame: encoded > 0 ? Double(outcome.cpuPlaying.total) / 1e6 / Double(encoded) : 0,
                wallSeconds: Double(outcome.wallPlayingNs) / 1e9, encoderSettings: bench.encoderSettings)
            figures.append(figure)
            log(String(format: "[%d/%d] %@ %@ %dx%d %d kbit/s %@: %d/%d frames, p50 %.2f ms, p95 %.2f ms, tracer p50 %.2f ms, CPU %.2f ms/frame%@",
                       index + 1, plan.count, encoder.codec, encoder.factory, size.width, size.height, kbps, source.label, encoded, frames,
                       figure.latency?.p50 ?? .nan, figure.latency?.p95 ?? .nan, figure.tracer?.p50 ?? .nan, figure.cpuMsPerFrame,
                       fps.map { String(format: ", %.0f fps", $0) } ?? ""))
        }
        return EncodeSection(method: Self.method, figures: figures, load: timer.finish())
    }
}
