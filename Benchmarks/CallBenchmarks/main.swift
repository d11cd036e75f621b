import BenchmarkSupport
import Foundation
import GStreamer

// bench-call: what a call costs and how it feels. `g2g` measures glass-to-glass latency through two
// real peer connections; `setup` the time from dialing to media through the whole ECV stack; `cost`
// the CPU and memory of concurrent agent calls.

let usage = """
    usage: bench-call g2g [--smoke] [--frames N] [--codecs vp8,vp9,h264] [--jitter-buffers 100,20] [--one-way]
                          [--results DIR] [--work DIR] [--fragment FILE] [--no-publish]
           bench-call setup [--smoke]    call setup time over 20 calls (3 with --smoke)
           bench-call cost [--smoke] [--calls record=N,N;decode=N;receive=N;send=N] [--processes K,K] [--stacks ecvkit,webrtcbin,pion] [--repeats N] [--window S] [--concurrency N] [--jitter-buffer-ms MS] [--callers-per-load-process N]
                                         CPU, memory, threads and complete recordings of 50, 100, 200, 300 recording and
                                         10, 20, 40 decoding agent calls, the bots in K processes (default 1)
           bench-call load --service-url URL --calls N [--codecs vp8|h264]
                                         the load generator alone: N callers sending a clip encoded once (stdin: dial,
                                         mark, hangup)
           bench-call network [--repeats N] [--conditions clean,loss-5,loss-20,cap-500,blackhole-5s,whole-loss-5,whole-loss-20] [--python PATH]
                              [--stacks ecvkit,ecvkit-adaptive,chromium] [--trace] [--results DIR] [--no-publish]
                                         ECVKit↔ECVKit and Chromium↔Chromium across an impaired network lab (root,
                                         ip, nft, tc, chromium, chromedriver, the interop venv; about 17 min);
                                         ecvkit-adaptive: only ECVKit's .adaptive runs under the cap; --trace: each
                                         ECVKit window's timeline (send rate, round trip, NACK/PLI, decisions,
                                         freezes, the caps' drops) with the progress lines

           bench-call lip-sync [--calls N] [--senders ecvkit,aiortc,chromium] [--python PATH] [--work DIR] [--fragment FILE]
                               [--no-publish]
                                         audio minus video of a flash/beep clip in a recording's file, N calls per sender
                                         (default 5): ECVKit senders (audio processing on and off) into a recording peer,
                                         aiortc and Chromium (the interop venv) into an agent bot's recording; ecvkit alone
                                         by default

           bench-call first-frame [--calls N] [--codecs vp8,vp9,h264] [--senders ecvkit,aiortc,chromium] [--python PATH]
                                  [--results DIR] [--no-publish]
                                         connected → first decoded frame and recording attach → first frame written at an
                                         ECVKit agent bot, N calls (default 20) per codec and sender (aiortc and chromium
                                         need the interop venv); results/first-frame-*

      g2g       glass-to-glass latency per codec at 640×480 and per jitter buffer latency
      --smoke   a few seconds (VP8, 20 ms jitter buffer, 30 frames), results in a temporary directory
      --frames  measured frames per configuration after the warm-up (default 300)
      --one-way the agent only receives (sendsMedia: false); with H264 this crashes webrtcbin 1.22 here
      --fragment also write the report JSON to FILE (for `bench-encode report`); --no-publish: only that
    """

/// A benchmark of `bench-call`.
protocol CallBenchmark {
    static var name: String { get }
    /// Measures and records into `report`.
    static func run(options: Options, report: inout BenchmarkReport) async throws
}

enum GlassToGlassBenchmark: CallBenchmark {
    static let name = "g2g"

    static func run(options: Options, report: inout BenchmarkReport) async throws {
        let smoke = options.has("smoke")
        let frames = try options.int("frames", default: smoke ? 30 : 300, range: 1...60_000)
        let codecs = try options.list("codecs", allowed: ["vp8", "vp9", "h264"])?.map { $0.uppercased() } ?? (smoke ? ["VP8"] : ["VP8", "VP9", "H264"])
        let jitterBuffers = try jitterBufferList(options.values["jitter-buffers"]) ?? (smoke ? [20] : [100, 20])
        let timer = SectionTimer()
        var figures: [GlassToGlassFigure] = []
        for codec in codecs {
            for jitter in jitterBuffers {
                var run = GlassToGlass(codec: codec, jitterBufferMs: jitter, frames: frames)
                run.agentSends = !options.has("one-way")
                figures.append(try await run.run(log: progress))
            }
        }
        report.glassToGlass = GlassToGlassSection(method: GlassToGlass.method, figures: figures, load: timer.finish())
    }

    static func jitterBufferList(_ text: String?) throws -> [Int]? {
        guard let text else { return nil }
        return try text.split(separator: ",").map { item in
            guard let value = Int(item.trimmingCharacters(in: .whitespaces)), (0...5000).contains(value) else {
                throw BenchmarkError.badInput("--jitter-buffers takes milliseconds in 0...5000, got \"\(item)\"")
            }
            return value
        }
    }
}

func main() async -> Int32 {
    var arguments = Array(CommandLine.arguments.dropFirst())
    guard let command = arguments.first, !command.hasPrefix("--") else {
        print(usage)
        return 2
    }
    arguments.removeFirst()
    do {
        let options = try Options(arguments, flags: ["smoke", "no-publish", "one-way", "trace"],
                                  valued: ["frames", "codecs", "jitter-buffers", "results", "work", "fragment", "service-url", "bots", "mode", "dir", "calls",
                                          "processes", "first", "repeats", "conditions", "python", "stacks", "senders", "concurrency",
                                          "jitter-buffer-ms", "callers-per-load-process", "window"])
        switch command {
        case NetworkBenchmark.name:
            try GStreamerRuntime.ensureInitialized()
            return try await NetworkBenchmark.run(options: options)
        case FirstFrameBenchmark.name:
            try GStreamerRuntime.ensureInitialized()
            return try await FirstFrameBenchmark.run(options: options)
        case "cost-agents":
            try await CostAgents.run(options: options)
            return 0
        case "webrtcbin-agents":
            try await WebrtcbinAgents.run(options: options)
            return 0
        case "load":
            try await LoadGenerator.run(options: options)
            return 0
        case GlassToGlassBenchmark.name, CallSetupBenchmark.name, CallCostBenchmark.name, LipSyncBenchmark.name:
            try GStreamerRuntime.ensureInitialized()
            let smoke = options.has("smoke")
            var report = BenchmarkReport(machine: MachineInfo.current(), smoke: smoke)
            progress("bench-call \(command) on \(report.machine.cpuModel), \(report.machine.cores) cores, \(report.machine.gstreamer); "
                     + "load \(report.machine.loadAverage.map { String($0) }.joined(separator: " "))")
            switch command {
            case CallSetupBenchmark.name: try await CallSetupBenchmark.run(options: options, report: &report)
            case CallCostBenchmark.name: try await CallCostBenchmark.run(options: options, report: &report)
            case LipSyncBenchmark.name: try await LipSyncBenchmark.run(options: options, report: &report)
            default: try await GlassToGlassBenchmark.run(options: options, report: &report)
            }
            try ReportFiles.deliver(report, options: options, paths: OutputPaths(options: options, smoke: smoke))
            return 0
        case "help", "-h":
            print(usage)
            return 0
        default:
            throw BenchmarkError.badInput("unknown command \"\(command)\"\n\(usage)")
        }
    } catch {
        FileHandle.standardError.write(Data("bench-call: \(error)\n".utf8))
        return 1
    }
}

exit(await main())
