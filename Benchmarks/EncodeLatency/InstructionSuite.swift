import BenchmarkSupport
import Foundation
import GStreamer
import MediaRuntime

/// `bench-encode instructions`: the framework-overhead comparison counted in instructions.
///
/// Timings on this shared machine move with everyone else's builds; callgrind's instruction
/// counts do not. Each side runs the same compiled graph under `valgrind --tool=callgrind` twice,
/// with a short and a long frame count, and a frame's cost is the difference ÷ the extra frames,
/// so start-up (the Swift runtime, the registry, plugin loading) and teardown cancel out.
struct InstructionSuite {
    var encoders: [EncoderChoice]
    var width = 320
    var height = 240
    var kbps = 300
    var shortFrames = 100
    var longFrames = 400
    var workDirectory: String

    static let method = """
        Per encoder, the compiled send graph's video branch (non-live `videotestsrc` with a moving pattern, so every frame is \
        encoded and the runs are identical; the encoder's queue blocking; payloader into `fakesink`) runs under \
        `valgrind --tool=callgrind` in ECVKit (`bench-encode instructions-child`: `SendMedia` materialises the graph into a \
        `Pipeline`, played to end-of-stream through the binding, as the SDK runs it; no probes, no tracer) and in \
        `gst-launch-1.0 -q` on the graph's own `launchDescription`. Ir = instructions executed by all threads of the process \
        (callgrind's totals). Both sides run with `GST_TRACERS` and `GST_DEBUG` empty. The two sides of a frame count run \
        at the same time (instruction counts do not depend on the load). Per-object and per-function figures come from the \
        same output files (own instructions per object; inclusive instructions of the Swift functions of our run, where \
        the Swift objects are this program, libswift*, Foundation and libdispatch).
        """

    func run(log: (String) -> Void) async throws -> InstructionsSection {
        let timer = SectionTimer()
        guard let program = Bundle.main.executablePath else { throw BenchmarkError.failed("cannot find this program's path") }
        var figures: [InstructionFigure] = []
        for encoder in encoders {
            var ours: [CallgrindProfile] = []
            var theirs: [CallgrindProfile] = []
            var launchLine = ""
            for frames in [shortFrames, longFrames] {
                let bench = try BenchGraph(encoder: encoder, width: width, height: height, kbps: kbps, source: .nonLive, frames: frames)
                launchLine = bench.launchLine
                let tag = "\(encoder.rawValue)-\(frames)"
                let ourOut = path("callgrind-ours-\(tag).out")
                let theirOut = path("callgrind-gst-launch-\(tag).out")
                let child = [program, "instructions-child", "--encoder", encoder.rawValue, "--frames", String(frames),
                             "--width", String(width), "--height", String(height), "--kbps", String(kbps)]
                async let mine: Void = Self.callgrind(child, output: ourOut, stderr: path("callgrind-ours-\(tag).stderr"))
                async let launched: Void = Self.callgrind(["/bin/sh", "-c", "exec " + Self.valgrind(output: theirOut).joined(separator: " ")
                                                              + " gst-launch-1.0 -q " + bench.launchLine],
                                                          output: nil, stderr: path("callgrind-gst-launch-\(tag).stderr"))
                try await mine
                try await launched
                ours.append(try CallgrindProfile(path: ourOut))
                theirs.append(try CallgrindProfile(path: theirOut))
                log("instructions \(encoder.factory) \(frames) frames: ours \(ours.last!.total) Ir, gst-launch \(theirs.last!.total) Ir")
            }
            let extra = longFrames - shortFrames
            let figure = InstructionFigure(
                codec: encoder.codec, encoder: encoder.factory, launchLine: launchLine,
                ours: InstructionCounts(short: ours[0].total, long: ours[1].total, frames: extra),
                gstLaunch: InstructionCounts(short: theirs[0].total, long: theirs[1].total, frames: extra),
                objects: Self.objectShares(ours: ours, theirs: theirs, frames: extra),
                swiftFunctions: try await Self.swiftFunctions(ours, frames: extra, program: (program as NSString).lastPathComponent,
                                                              work: workDirectory))
            log(String(format: "instructions %@: ours %.0f Ir/frame, gst-launch %.0f Ir/frame, ratio %.4f",
                       encoder.factory, figure.ours.perFrame, figure.gstLaunch.perFrame, figure.ratio))
            figures.append(figure)
        }
        return InstructionsSection(method: Self.method, width: width, height: height, kbps: kbps, shortFrames: shortFrames,
                                   longFrames: longFrames, figures: figures, load: timer.finish())
    }

    private func path(_ name: String) -> String { (workDirectory as NSString).appendingPathComponent(name) }

    private static func valgrind(output: String) -> [String] {
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=\(output)"]
    }

    /// Runs `arguments` under callgrind (when `output` is given; else they already call valgrind).
    private static func callgrind(_ arguments: [String], output: String?, stderr: String) async throws {
        let command = output.map { valgrind(output: $0) + arguments } ?? arguments
        let outcome = try await ChildProcess.run(command, environment: ["GST_TRACERS": "", "GST_DEBUG": ""], stderrPath: stderr)
        guard outcome.exitStatus == 0 else {
            throw BenchmarkError.failed("\(arguments.joined(separator: " ")) exited with \(outcome.exitStatus); see \(stderr)")
        }
    }

    /// The objects whose own per-frame instructions differ most between the sides.
    static func objectShares(ours: [CallgrindProfile], theirs: [CallgrindProfile], frames: Int) -> [ObjectShare] {
        let (ourShort, ourLong) = (ours[0].ownByObject, ours[1].ownByObject)
        let (theirShort, theirLong) = (theirs[0].ownByObject, theirs[1].ownByObject)
        let names = Set(ourShort.keys).union(ourLong.keys).union(theirShort.keys).union(theirLong.keys)
        func perFrame(_ short: [String: UInt64], _ long: [String: UInt64], _ name: String) -> Double {
            (Double(long[name] ?? 0) - Double(short[name] ?? 0)) / Double(frames)
        }
        let shares = names.map { name in
            ObjectShare(object: name, ours: perFrame(ourShort, ourLong, name), gstLaunch: perFrame(theirShort, theirLong, name))
        }
        return Array(shares.filter { abs($0.ours - $0.gstLaunch) >= 1 }
            .sorted { abs($0.ours - $0.gstLaunch) > abs($1.ours - $1.gstLaunch) }.prefix(10))
    }

    static func isSwift(_ object: String, program: String) -> Bool {
        object == program || object.contains("swift") || object.contains("Foundation") || object.contains("dispatch")
            || object.contains("BlocksRuntime")
    }

    /// Our run's Swift functions by per-frame inclusive instructions, names demangled.
    static func swiftFunctions(_ ours: [CallgrindProfile], frames: Int, program: String, work: String) async throws -> [FunctionShare] {
        var shares: [FunctionShare] = []
        for (function, cost) in ours[1].functions where isSwift(function.object, program: program) {
            let before = ours[0].functions[function] ?? CallgrindProfile.Cost()
            let inclusive = (Double(cost.inclusive) - Double(before.inclusive)) / Double(frames)
            guard inclusive >= 1 else { continue }
            shares.append(FunctionShare(function: function.name, object: function.object, inclusive: inclusive,
                                        own: (Double(cost.own) - Double(before.own)) / Double(frames)))
        }
        shares = Array(shares.sorted { $0.inclusive > $1.inclusive }.prefix(15))
        let names = try await Demangler.demangle(shares.map(\.function), work: work)
        for index in shares.indices { shares[index].function = names[index] }
        return shares
    }
}

/// Swift symbol names made readable with the toolchain's `swift-demangle`; names it cannot read
/// (C functions) come back unchanged.
enum Demangler {
    static func demangle(_ names: [String], work: String) async throws -> [String] {
        guard !names.isEmpty else { return [] }
        let input = (work as NSString).appendingPathComponent("demangle-in.txt")
        let output = (work as NSString).appendingPathComponent("demangle-out.txt")
        try names.joined(separator: "\n").appending("\n").write(toFile: input, atomically: true, encoding: .utf8)
        let outcome = try await ChildProcess.run(["/bin/sh", "-c", "exec swift-demangle --simplified < \"$0\"", input], stdoutPath: output)
        let lines = outcome.exitStatus == 0 ? try String(contentsOfFile: output, encoding: .utf8).split(separator: "\n").map(String.init) : []
        return lines.count == names.count ? lines : names
    }
}

/// The in-process side of `instructions`: one run of the graph to end-of-stream, nothing else.
func runInstructionChild(_ options: Options) async throws {
    guard let encoder = options.values["encoder"].flatMap(EncoderChoice.init(rawValue:)) else {
        throw BenchmarkError.badInput("instructions-child: --encoder vp8|vp9|x264|openh264")
    }
    let frames = try options.int("frames", default: 100, range: 1...100_000)
    let bench = try BenchGraph(encoder: encoder, width: try options.int("width", default: 320, range: 16...4096),
                               height: try options.int("height", default: 240, range: 16...4096),
                               kbps: try options.int("kbps", default: 300, range: 1...100_000), source: .nonLive, frames: frames)
    let pipeline = Pipeline(name: "bench")
    let send = try SendMedia(graph: bench.graph, into: pipeline)
    try await pipeline.play(timeout: .seconds(600))
    try await pipeline.waitForEndOfStream(timeout: .seconds(3600))
    pipeline.stop()
    withExtendedLifetime(send) {}
}
