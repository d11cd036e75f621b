import BenchmarkSupport
import Foundation
import MediaTestSupport
import NetworkTestSupport

/// `bench-call network`: ECVKit↔ECVKit and Chromium↔Chromium calls across the same impaired
/// network lab, frame rate and freezes per receiving direction, ECVKit's as a ratio to Chromium's.
/// Runs alternate between the stacks, condition by condition, so a change in the machine's load
/// falls on both. Publishes `results/network-<timestamp>.{json,md}` and `network-latest.*`.
enum NetworkBenchmark {
    static let name = "network"

    static let method = """
        Both ends of every call run on this machine: one in the host's network namespace, one in a `NetworkLab` \
        namespace joined by a veth pair, so every media packet crosses the impaired link (loss by nftables `numgen random` \
        on UDP and TCP in both directions, sparing only the service's port for the in-lab browser's page and signaling; \
        the cap by `tbf` on both egresses with a 100 ms queue; the blackhole drops everything). \
        ECVKit: our `PeerConnection` here and an `ecv-network-peer` child in the lab (`LabCall`), signaling over its pipes; \
        NACK/RTX on (the default); under the cap also `.adaptive` with a 1.5 Mbit/s ceiling, which sends more than \
        the cap lets through (both stacks' own default rates at 320×240 fit under it). Chromium: the reference service's browser page in \
        two headless Chromiums, one here and one in the lab, in one room. 320×240 VP8, 30 fps, audio on, each stack's \
        default bitrate. A run: connect (under the loss already for 20 %), 3 s clean, then a \(Int(NetworkCondition.window)) s \
        window that starts with the impairment (the blackhole lasts its first 5 s). Decoded frames: ECVKit's renderer \
        appsink on each end (exact times); Chromium's `framesDecoded` from each page's video receiver every 50 ms. Both \
        go through one measurement: the count sampled every 50 ms, the frames of each interval spread evenly over it. \
        fps = frames in the window ÷ its length; a freeze = a gap between frames over 150 ms (3 frame intervals at \
        30 fps would be 100 ms; the sampling makes a gap ±50 ms), the window's edges counting as frames; freeze s = the \
        sum of those gaps. Connect = start of the call (ECVKit) or \
        the second page joining the room (Chromium) to a first frame both ways. Media back = the path returning to the \
        next frame. Each cell: the median of the runs, with the range.
        """

    struct Report: Codable {
        var machine: MachineInfo
        var method: String
        var repetitions: Int
        var runs: [NetworkRun]
        var load: LoadWindow
    }

    static func run(options: Options) async throws -> Int32 {
        let repetitions = try options.int("repeats", default: 3, range: 1...20)
        let conditions = try options.list("conditions", allowed: NetworkCondition.allCases.map(\.rawValue))?
            .compactMap { NetworkCondition(rawValue: $0) } ?? NetworkCondition.allCases
        // "ecvkit-adaptive": only the `.adaptive` runs under the cap (tuning the rate control).
        let stacks = try options.list("stacks", allowed: ["ecvkit", "ecvkit-adaptive", "chromium"]) ?? ["ecvkit", "chromium"]
        let trace = options.has("trace")
        let tools = try prerequisites(options: options)
        let machine = MachineInfo.current()
        progress("bench-call network on \(machine.cpuModel), \(machine.cores) cores; load \(machine.loadAverage.map { String($0) }.joined(separator: " ")); "
                 + "\(conditions.count) conditions × \(repetitions) runs per stack")
        let timer = SectionTimer()
        var runs: [NetworkRun] = []
        for repetition in 1...repetitions {
            for condition in conditions {
                var cell: [NetworkRun] = []
                if stacks.contains("ecvkit") {
                    cell.append(await NetworkEcvkitRun.run(condition: condition, adaptive: false, repetition: repetition, trace: trace))
                }
                if condition == .cap500, stacks.contains("ecvkit") || stacks.contains("ecvkit-adaptive") {
                    cell.append(await NetworkEcvkitRun.run(condition: condition, adaptive: true, repetition: repetition, trace: trace))
                }
                if stacks.contains("chromium") {
                    cell.append(await NetworkChromiumRun.run(condition: condition, repetition: repetition, tools: tools))
                }
                for run in cell { progress(NetworkMarkdown.line(run)) }
                runs += cell
            }
        }
        let report = Report(machine: machine, method: method, repetitions: repetitions, runs: runs, load: timer.finish())
        let markdown = NetworkMarkdown.render(report)
        print(markdown)
        if !options.has("no-publish") {
            let directory = options.values["results"] ?? "Benchmarks/results"
            for path in try publish(report, markdown: markdown, in: directory) { progress("wrote \(path)") }
        }
        let failed = runs.filter { $0.failure != nil }
        if !failed.isEmpty { progress("\(failed.count) of \(runs.count) runs measured nothing (see the table)") }
        return failed.count == runs.count ? 1 : 0
    }

    /// Everything the benchmark needs, or a clear error naming what is missing.
    static func prerequisites(options: Options) throws -> NetworkChromiumRun.Tools {
        if let reason = NetworkLab.unavailableReason { throw BenchmarkError.failed("network: \(reason)") }
        let environment = ProcessInfo.processInfo.environment
        let files = FileManager.default
        let python = options.values["python"] ?? environment["ECV_INTEROP_PYTHON"] ?? ".build/interop-venv/bin/python"
        let script = "Tests/Interop/peers/chromium_peer.py"
        let chromium = environment["ECV_CHROMIUM"] ?? "/usr/bin/chromium"
        let driver = environment["ECV_CHROMEDRIVER"] ?? "/usr/bin/chromedriver"
        let peer = BuiltExecutable.url(named: "ecv-network-peer").path
        let needed: [(String, String)] = [
            (peer, "build it: swift build -c release --product ecv-network-peer"),
            (python, "the interop venv: `make test-deps`, or --python / ECV_INTEROP_PYTHON naming one with selenium"),
            (chromium, "apt-get install chromium (or ECV_CHROMIUM)"),
            (driver, "apt-get install chromium-driver (or ECV_CHROMEDRIVER)"),
        ]
        for (path, hint) in needed where !files.isExecutableFile(atPath: path) {
            throw BenchmarkError.failed("network: \(path) is missing: \(hint)")
        }
        guard files.fileExists(atPath: script) else {
            throw BenchmarkError.failed("network: run it from the package root (\(script) not found)")
        }
        return NetworkChromiumRun.Tools(python: python, script: script)
    }

    static func publish(_ report: Report, markdown: String, in directory: String) throws -> [String] {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMdd'T'HHmmss'Z'"
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let json = try encoder.encode(report)
        var written: [String] = []
        for name in ["network-\(formatter.string(from: Date()))", "network-latest"] {
            let base = (directory as NSString).appendingPathComponent(name)
            try json.write(to: URL(fileURLWithPath: base + ".json"))
            try markdown.write(toFile: base + ".md", atomically: true, encoding: .utf8)
            written += [base + ".json", base + ".md"]
        }
        return written
    }
}
