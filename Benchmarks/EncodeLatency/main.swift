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
           bench-encode instructions [--encoders vp8,vp9,x264,openh264] [--frames SHORT,LONG] [--results DIR] [--work DIR]
                        [--no-publish] [--fragment FILE]

      run       (default) measure; publishes <results>/<timestamp>.json|.md, latest.json|.md, latest-encode.svg
      report    merge report fragments (and aiortc's results) and publish them
      instructions  framework overhead in instructions per frame (callgrind), 320×240; publishes
                <results>/instructions-<timestamp>.json|.md and instructions-latest.json|.md
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

func measureInstructions(_ options: Options) async throws {
    let paths = try OutputPaths(options: options, smoke: false)
    let counts = (options.values["frames"] ?? "100,400").split(separator: ",").compactMap { Int($0) }
    guard counts.count == 2, counts[0] >= 1, counts[1] > counts[0] else {
        throw BenchmarkError.badInput("--frames takes two frame counts, short then long: 100,400")
    }
    let encoders = try options.list("encoders", allowed: EncoderChoice.allCases.map(\.rawValue))
        .map { $0.compactMap(EncoderChoice.init(rawValue:)) } ?? EncoderChoice.allCases
    try GStreamerRuntime.ensureInitialized()
    var report = BenchmarkReport(machine: MachineInfo.current(), smoke: false)
    log("bench-encode instructions; load \(report.machine.loadAverage.map { String($0) }.joined(separator: " "))")
    report.instructions = try await InstructionSuite(encoders: encoders.filter(\.isInstalled), shortFrames: counts[0], longFrames: counts[1],
                                                     workDirectory: paths.work).run(log: log)
    if let fragment = options.values["fragment"] { try ReportFiles.write(report, to: fragment) }
    if !options.has("no-publish") {
        for path in try ReportFiles.publish(report, in: paths.results, prefix: "instructions-") { log("wrote \(path)") }
        print(MarkdownReport.render(report))
    }
}

func runCommand(_ command: String, _ arguments: [String]) async -> Int32 {
    do {
        switch command {
        case "run":
            try await runBenchmarks(Options(arguments, flags: ["smoke", "no-publish", "keep-raw"],
                                            valued: ["frames", "repeats", "encoders", "sections", "results", "work", "fragment"]))
        case "report":
            try mergeReports(Options(arguments, flags: ["no-publish"], valued: ["aiortc", "results", "work", "fragment"]))
        case "instructions":
            try await measureInstructions(Options(arguments, flags: ["no-publish"], valued: ["encoders", "frames", "results", "work", "fragment"]))
        case "instructions-child":
            try await runInstructionChild(Options(arguments, flags: [], valued: ["encoder", "frames", "width", "height", "kbps"]))
        case "help", "-h":
            print(usage)
        default:
            throw BenchmarkError.badInput("unknown command \"\(command)\"\n\(usage)")
        }
        return 0
    } catch {
        FileHandle.standardError.write(Data("bench-encode: \(error)\n".utf8))
        return 1
    }
}

let commandLine = Array(CommandLine.arguments.dropFirst())
let command = commandLine.first.flatMap { $0.hasPrefix("--") ? nil : $0 } ?? "run"
let commandArguments = commandLine.first == command ? Array(commandLine.dropFirst()) : commandLine
Task.detached { exit(await runCommand(command, commandArguments)) }
if command == "instructions-child" {
    // Runs under valgrind: 3.19 crashes (SIGSEGV in valgrind itself) delivering a signal to a main
    // thread that libdispatch has parked in sigsuspend after pthread_exit, which is what
    // dispatch_main (and so an async main) does on Linux. The main thread sleeps instead; the
    // command's task ends the process.
    while true { sleep(3600) }
}
dispatchMain()
