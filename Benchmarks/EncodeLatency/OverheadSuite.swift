import BenchmarkSupport
import Foundation

/// Section 2: the same graph run by ECVKit in-process and by plain gst-launch-1.0 as a child,
/// alternately, each measured the same way (latency tracer, CPU per frame by difference).
struct OverheadSuite {
    var encoders: [EncoderChoice]
    var width = 640
    var height = 480
    var kbps = 800
    var frames: Int
    var repetitions: Int
    var workDirectory: String

    static let method = """
        Per encoder, the same compiled graph (live 30 fps `videotestsrc`, 640×480, 800 kbit/s, payloader into `fakesink`) is run by \
        ECVKit (`SendMedia` in this process, no pad probes) and by `gst-launch-1.0` on the graph's own `launchDescription`, \
        alternately, with the latency tracer on in both (`LatencyTracer.enable(flags: "element")` in-process; \
        `GST_TRACERS="latency(flags=element)" GST_DEBUG="GST_TRACER:7"` for gst-launch, its log parsed). Latency: p50 of the \
        encoder's `element-latency` records. CPU per frame: getrusage of a full run minus that of a 1-frame run of the same graph, \
        divided by the frame difference, so process start-up, plugin loading and teardown cancel out (our in-process figure counts \
        from building the pipeline to tearing it down; gst-launch's is the child's whole life from wait4).
        """

    func run(log: (String) -> Void) async throws -> OverheadSection {
        let timer = SectionTimer()
        var figures: [OverheadFigure] = []
        for encoder in encoders {
            let full = try BenchGraph(encoder: encoder, width: width, height: height, kbps: kbps, source: .live, frames: frames)
            let single = try BenchGraph(encoder: encoder, width: width, height: height, kbps: kbps, source: .live, frames: 1)
            let timeout = Duration.seconds(Double(frames) / 10 + 60)
            // Baselines: what a run costs besides its frames.
            let ourBaseline = try await InProcessRun(bench: single, probes: false, timeout: timeout).run().cpuWhole.total
            let launchBaseline = try await LaunchRun(bench: single, workDirectory: workDirectory).run(tag: "\(encoder.rawValue)-1").cpu.total
            var ours: [OverheadSample] = []
            var theirs: [OverheadSample] = []
            for repetition in 1...repetitions {
                let mine = try await InProcessRun(bench: full, probes: false, timeout: timeout).run()
                ours.append(sample(tracer: mine.tracer, full: mine.cpuWhole.total, baseline: ourBaseline))
                let launched = try await LaunchRun(bench: full, workDirectory: workDirectory).run(tag: "\(encoder.rawValue)-\(repetition)")
                theirs.append(sample(tracer: launched.tracer, full: launched.cpu.total, baseline: launchBaseline))
                log(String(format: "overhead %@ run %d/%d: ours p50 %.2f ms %.2f ms/frame CPU; gst-launch p50 %.2f ms %.2f ms/frame CPU",
                           encoder.factory, repetition, repetitions, ours.last?.encoderLatency?.p50 ?? .nan, ours.last!.cpuMsPerFrame,
                           theirs.last?.encoderLatency?.p50 ?? .nan, theirs.last!.cpuMsPerFrame))
            }
            figures.append(OverheadFigure(codec: encoder.codec, encoder: encoder.factory, width: width, height: height, kbps: kbps,
                                          frames: frames, ours: ours, gstLaunch: theirs, launchLine: full.launchLine))
        }
        return OverheadSection(method: Self.method, figures: figures, load: timer.finish())
    }

    private func sample(tracer: [UInt64], full: UInt64, baseline: UInt64) -> OverheadSample {
        OverheadSample(encoderLatency: LatencySummary(nanoseconds: tracer),
                       cpuMsPerFrame: (Double(full) - Double(baseline)) / 1e6 / Double(max(frames - 1, 1)),
                       cpuFullRunMs: Double(full) / 1e6, cpuOneFrameRunMs: Double(baseline) / 1e6)
    }
}
