import BenchmarkSupport
import Foundation
import GLibCore
import GStreamer
import MediaRuntime
import Synchronization

/// Per-frame timestamps taken by pad probes on the streaming threads, matched by PTS.
///
/// Some encoders shift every timestamp by a constant: x264enc asks the GstVideoEncoder base class
/// for a minimum PTS of 1000 hours, so its output PTS is the input's plus 3.6e15 ns. The shift is
/// learnt from the first frame out (none of the benchmarked configurations reorders frames:
/// no B-frames, no lookahead) and removed from every later output PTS before matching.
final class FrameTimes: Sendable {
    private struct State {
        var firstInputPTS: UInt64?
        var outputShift: UInt64?
        var sourced: [UInt64: UInt64] = [:]
        var entered: [UInt64: UInt64] = [:]
        var encoded: [UInt64: UInt64] = [:]
        var payloaded: [UInt64: UInt64] = [:]
        var firstIn: UInt64?
        var lastOut: UInt64?
    }
    private let state = Mutex(State())

    /// A frame leaving the source element (before conversion, videorate and the queue). videorate
    /// re-stamps frames from its own frame count, a few nanoseconds off the source's PTS, so these
    /// are keyed by PTS rounded to the millisecond (frames are 33 ms apart). Only meaningful when
    /// the source's PTS are exact frame times (an appsrc fed at n/30 s); a live videotestsrc stamps
    /// clock times that videorate moves onto its grid.
    func sourced(_ pts: UInt64?) {
        let now = MonotonicClock.nanoseconds()
        guard let pts else { return }
        state.withLock { state in
            let key = Self.millisecond(pts)
            if state.sourced[key] == nil { state.sourced[key] = now }
        }
    }

    private static func millisecond(_ pts: UInt64) -> UInt64 { (pts + 500_000) / 1_000_000 }

    func enter(_ pts: UInt64?) {
        let now = MonotonicClock.nanoseconds()
        guard let pts else { return }
        state.withLock { state in
            if state.entered[pts] == nil { state.entered[pts] = now }
            if state.firstIn == nil { state.firstIn = now }
            if state.firstInputPTS == nil { state.firstInputPTS = pts }
        }
    }

    /// The first buffer with this PTS leaving the encoder: the frame is encoded.
    func encoded(_ pts: UInt64?) {
        let now = MonotonicClock.nanoseconds()
        guard let pts else { return }
        state.withLock { state in
            if state.outputShift == nil { state.outputShift = pts &- (state.firstInputPTS ?? pts) }
            let input = pts &- state.outputShift!
            if state.encoded[input] == nil { state.encoded[input] = now }
            state.lastOut = now
        }
    }

    /// Every RTP packet of the frame leaving the payloader: the last one ends the frame's work.
    func payloaded(_ pts: UInt64?) {
        let now = MonotonicClock.nanoseconds()
        guard let pts else { return }
        state.withLock { state in
            guard let shift = state.outputShift else { return }
            state.payloaded[pts &- shift] = now
        }
    }

    struct Result {
        /// Encoder sink → src, per frame in PTS order.
        var encode: [UInt64]
        /// Encoder sink → last payloader packet, per frame in PTS order.
        var encodeAndPayload: [UInt64]
        /// Source src pad → encoder sink pad, per frame in PTS order.
        var upstream: [UInt64]
        var framesIn: Int
        var firstIn: UInt64?
        var lastOut: UInt64?
    }

    var result: Result {
        state.withLock { state in
            let order = state.entered.keys.sorted()
            return Result(encode: order.compactMap { pts in state.encoded[pts].map { $0 - state.entered[pts]! } },
                          encodeAndPayload: order.compactMap { pts in state.payloaded[pts].map { $0 - state.entered[pts]! } },
                          upstream: order.compactMap { pts in state.sourced[Self.millisecond(pts)].map { state.entered[pts]! &- $0 } },
                          framesIn: state.entered.count, firstIn: state.firstIn, lastOut: state.lastOut)
        }
    }
}

/// One run of a bench graph inside this process, exactly as the SDK builds it: `SendMedia`
/// materialises the compiled graph into a `Pipeline`.
struct InProcessRun {
    struct Outcome {
        var frames: FrameTimes.Result
        /// The latency tracer's `element-latency` records for the encoder, nanoseconds.
        var tracer: [UInt64]
        /// From requesting PLAYING to end-of-stream.
        var cpuPlaying: CPUTime
        /// From building the pipeline to after it is torn down (comparable with a child process's whole life).
        var cpuWhole: CPUTime
        var wallPlayingNs: UInt64
    }

    let bench: BenchGraph
    /// Pad probes on the encoder (and payloader); off when only the tracer should observe.
    var probes = true
    var timeout: Duration = .seconds(120)

    /// Runs to end-of-stream. `feed` pushes frames into the graph's appsrc (for `BenchSource.app`)
    /// and must end the stream.
    func run(feed: (@Sendable (AppSource) async throws -> Void)? = nil) async throws -> Outcome {
        let tracerTimes = Locked<[UInt64]>([])
        let encoderName = bench.encoderNode
        let observation = LatencyTracer.observe { record in
            guard record.kind == "element-latency", record.element == encoderName else { return }
            tracerTimes.withLock { $0.append(record.time) }
        }
        defer { observation.cancel() }

        let cpuBefore = CPUTime.ofThisProcess()
        let pipeline = Pipeline(name: "bench")
        let send = try SendMedia(graph: bench.graph, into: pipeline)
        let times = FrameTimes()
        var installed: [PadProbe] = []
        if probes {
            guard let encoder = send.elements.elements[bench.encoderNode],
                  let sink = encoder.staticPad("sink"), let source = encoder.staticPad("src"),
                  let payloader = send.elements.elements[bench.packetNode]?.staticPad("src") else {
                throw BenchmarkError.failed("cannot find the encoder's or payloader's pads")
            }
            installed.append(sink.addBufferProbe { info, _ in times.enter(info.pts); return .pass })
            if let sourceNode = bench.graph.nodes.first(where: { if case .videoSource = $0.role { true } else { false } }),
               let sourcePad = send.elements.elements[sourceNode.id]?.staticPad("src") {
                installed.append(sourcePad.addBufferProbe { info, _ in times.sourced(info.pts); return .pass })
            }
            installed.append(source.addBufferProbe { info, _ in times.encoded(info.pts); return .pass })
            installed.append(payloader.addBufferProbe { info, _ in times.payloaded(info.pts); return .pass })
        }
        let appSource = try send.elements.elements.values.first { $0.factoryName == "appsrc" }.map { try AppSource($0) }

        let cpuPlay = CPUTime.ofThisProcess()
        let started = MonotonicClock.nanoseconds()
        do {
            if let feed {
                // A live pipeline only reaches PLAYING once a buffer has reached its sink, so the
                // feeding starts with the state change (an appsrc queues what comes early).
                guard let appSource else { throw BenchmarkError.failed("the graph has no appsrc to feed") }
                async let feeding: Void = feed(appSource)
                try await pipeline.play(timeout: .seconds(30))
                try await feeding
            } else {
                try await pipeline.play(timeout: .seconds(30))
            }
            try await pipeline.waitForEndOfStream(timeout: timeout)
        } catch {
            pipeline.stop()
            throw BenchmarkError.failed("\(bench.encoder.factory): \(error)")
        }
        let cpuEnd = CPUTime.ofThisProcess()
        let wall = MonotonicClock.nanoseconds() - started
        for probe in installed { probe.cancel() }
        pipeline.stop()
        withExtendedLifetime(send) {}
        let cpuAfter = CPUTime.ofThisProcess()
        return Outcome(frames: times.result, tracer: tracerTimes.value, cpuPlaying: cpuEnd - cpuPlay,
                       cpuWhole: cpuAfter - cpuBefore, wallPlayingNs: wall)
    }
}

/// One run of the same graph text by `gst-launch-1.0`, with the latency tracer writing to a log.
struct LaunchRun {
    struct Outcome {
        var tracer: [UInt64]
        var cpu: CPUTime
        var wallNs: UInt64
    }

    let bench: BenchGraph
    let workDirectory: String

    func run(tag: String) async throws -> Outcome {
        let log = (workDirectory as NSString).appendingPathComponent("gst-launch-\(tag).log")
        let stderr = (workDirectory as NSString).appendingPathComponent("gst-launch-\(tag).stderr")
        let outcome = try await ChildProcess.gstLaunch(bench.launchLine, environment: TracerLog.environment(logPath: log),
                                                       stderrPath: stderr)
        let tracer = try TracerLog.elementLatencies(in: log, element: bench.encoderNode)
        try? FileManager.default.removeItem(atPath: log)
        return Outcome(tracer: tracer, cpu: outcome.cpu, wallNs: outcome.wallNanoseconds)
    }
}
