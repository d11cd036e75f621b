import BenchmarkSupport
import Foundation
import GStreamer

// bench-encode: encode latency, framework overhead against gst-launch-1.0, and our half of the
// side-by-side with aiortc; `report` merges the parts of one run into the published results.

let usage = """
    usage: bench-encode [run] [--smoke] [--frames N] [--repeats N] [--encoders vp8,vp9,x264,openh264]
                        [--sections encode,overhead,peer] [--results DIR] [--work DIR] [--fragment FILE]
                        [--no-publish] [--keep-raw]
           bench-encode report FRAGMENT.json... [--aiortc FILE] [--results DIR]

      run       (default) measure; publishes <results>/<timestamp>.json|.md, latest.json|.md, latest-encode.svg
      report    merge report fragments (and aiortc's results) and publish them
      --smoke   a few seconds with tiny frame counts, results in a temporary directory (for CI)
      --frames  frames per configuration (default 300, smoke 15)
      --repeats overhead runs per encoder, ours and gst-launch alternately (default 2)
      --fragment also write the report JSON to FILE (for `report`); --no-publish: only that
      --keep-raw keep <work>/frames-640x480.i420 (the raw frames aiortc encodes next)
    """

func log(_ line: String) { progress(line) }

func runBenchmarks(_ options: Options) async throws {
    let smoke = options.has("smoke")
    let paths = try OutputPaths(options: options, smoke: smoke)
    let frames = try options.int("frames", default: smoke ? 15 : 300, range: 2...100_000)
    let repeats = try options.int("repeats", default: smoke ? 1 : 2, range: 1...50)
    let sections = try options.list("sections", allowed: ["encode", "overhead", "peer"]) ?? ["encode", "overhead", "peer"]
    let askedEncoders = try options.list("encoders", allowed: EncoderChoice.allCases.map(\.rawValue))
        .map { $0.compactMap(EncoderChoice.init(rawValue:)) } ?? (smoke ? [.vp8, .x264] : EncoderChoice.allCases)

    try TracerSetup.initializeWithLatencyTracer()
    let encoders = askedEncoders.filter { encoder in
        if !encoder.isInstalled { log("skipping \(encoder.factory): not installed") }
        return encoder.isInstalled
    }
    var report = BenchmarkReport(machine: MachineInfo.current(), smoke: smoke)
    log("bench-encode on \(report.machine.cpuModel), \(report.machine.cores) cores, \(report.machine.gstreamer); "
        + "load \(report.machine.loadAverage.map { String($0) }.joined(separator: " "))")

    if sections.contains("encode") {
        let sizes = smoke ? [EncodeSuite.Size(width: 320, height: 240, bitrates: [300])] : EncodeSuite.sizes
        report.encode = try await EncodeSuite(encoders: encoders, sizes: sizes, frames: frames).run(log: log)
    }
    if sections.contains("overhead") {
        report.overhead = try await OverheadSuite(encoders: smoke ? [.vp8] : encoders, frames: frames, repetitions: repeats,
                                                  workDirectory: paths.work).run(log: log)
    }
    if sections.contains("peer") {
        let rawPath = (paths.work as NSString).appendingPathComponent("frames-640x480.i420")
        let raw = try await RawFrames.dump(to: rawPath, width: 640, height: 480, count: frames)
        report.peer = try await PeerSuite(frames: raw).run(log: log)
        if !options.has("keep-raw") { try? FileManager.default.removeItem(atPath: rawPath) }
    }
    try ReportFiles.deliver(report, options: options, paths: paths)
}

func mergeReports(_ options: Options) throws {
    guard !options.positional.isEmpty else { throw BenchmarkError.badInput("report: name at least one fragment\n\(usage)") }
    var merged = try ReportFiles.read(options.positional[0])
    for path in options.positional.dropFirst() { merged = merged.merging(try ReportFiles.read(path)) }
    if let aiortcPath = options.values["aiortc"] {
        guard merged.peer != nil else { throw BenchmarkError.badInput("--aiortc given but no fragment has the peer section") }
        try merged.peer!.add(AiortcResults.read(aiortcPath))
    }
    let paths = try OutputPaths(options: options, smoke: merged.smoke)
    try ReportFiles.deliver(merged, options: options, paths: paths)
}

var arguments = Array(CommandLine.arguments.dropFirst())
let command = arguments.first.flatMap { $0.hasPrefix("--") ? nil : $0 } ?? "run"
if arguments.first == command { arguments.removeFirst() }
do {
    switch command {
    case "run":
        try await runBenchmarks(Options(arguments, flags: ["smoke", "no-publish", "keep-raw"],
                                        valued: ["frames", "repeats", "encoders", "sections", "results", "work", "fragment"]))
    case "report":
        try mergeReports(Options(arguments, flags: ["no-publish"], valued: ["aiortc", "results", "work", "fragment"]))
    case "help", "-h":
        print(usage)
    default:
        throw BenchmarkError.badInput("unknown command \"\(command)\"\n\(usage)")
    }
} catch {
    FileHandle.standardError.write(Data("bench-encode: \(error)\n".utf8))
    exit(1)
}
