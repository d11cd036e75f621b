import BenchmarkSupport
import ECV
import ECVAgent
import ECVProtocol
import ECVService
import Foundation
import GLibCore

/// `bench-call first-frame`: how soon an ECVKit agent bot has the caller's picture, once media
/// connects and once a recording starts mid-call, per codec and per sending stack.
/// Publishes `results/first-frame-<timestamp>.{json,md}` and `first-frame-latest.*`.
enum FirstFrameBenchmark {
    static let name = "first-frame"

    static let method = """
        Each call goes through the reference service on loopback: an ECV caller dials (`createVideoCall`, `start`), an \
        ECVKit agent bot (ECVAgent, auto-accept, joins the room, decodes the caller's video to RGBA with its renderer, \
        sends its own test pattern and tone back) answers. The caller's media end is the *sender*: ECVKit (the same \
        SDK call `connect()`s and `startRoom()`s on AgentConnected, 640×480 test pattern), aiortc \
        (`Tests/Interop/peers/aiortc_peer.py --role caller` with the call's caller token, 640×480) or Chromium (headless, \
        the service's browser page through `Tests/Interop/peers/chromium_peer.py`, fake camera at 640×480). For a \
        foreign sender the bot joins the room first and offers. **connected → first frame**: the bot's `connected` event \
        (its WebRtcConnected) as seen by a task of this program → the first frame its renderer hands over (decoded), \
        CLOCK_MONOTONIC. **attach → first frame written**: 2 s after that first frame the bot calls `startRecording` \
        (separate tracks, Matroska, passthrough) → the recording's remote video track passes its first frame to the \
        muxer (`CallRecorder.startedTracks`, polled every 1 ms); *startRecording returned* is the part of it the call \
        itself took. Calls run one after another; a failed call is kept with its reason and not retried. Caller, service \
        and bot share this process; the foreign peers are child processes on the same 2 cores.
        """

    struct Cell: Codable {
        var codec: String
        var sender: FirstFrameSender
        var calls: [FirstFrameCall]
        var connectedToFirstFrame: LatencySummary?
        var attachToFirstWritten: LatencySummary?
        var startRecordingReturned: LatencySummary?
        /// A foreign sender's first record of a key-frame request after `startRecording` was called.
        var senderSawRequest: LatencySummary?
        var note: String?
        var load: LoadWindow
    }

    struct Report: Codable {
        var machine: MachineInfo
        var method: String
        var callsPerCell: Int
        var cells: [Cell]
        var load: LoadWindow
    }

    static func run(options: Options) async throws -> Int32 {
        let calls = try options.int("calls", default: 20, range: 1...500)
        let codecs = try options.list("codecs", allowed: ["vp8", "vp9", "h264"])?.map { $0.uppercased() } ?? ["VP8", "VP9", "H264"]
        let senders = try options.list("senders", allowed: FirstFrameSender.allCases.map(\.rawValue))?
            .compactMap(FirstFrameSender.init(rawValue:)) ?? FirstFrameSender.allCases
        let python = options.values["python"] ?? ProcessInfo.processInfo.environment["ECV_INTEROP_PYTHON"] ?? ".build/interop-venv/bin/python"
        if senders != [.ecvkit], !FileManager.default.isExecutableFile(atPath: python) {
            throw BenchmarkError.badInput("first-frame: no interop venv at \(python) (`make test-deps`, --python or ECV_INTEROP_PYTHON)")
        }
        let paths = try OutputPaths(options: options, smoke: false)
        let machine = MachineInfo.current()
        progress("bench-call first-frame; load \(machine.loadAverage.map { String($0) }.joined(separator: " ")); \(calls) calls per cell")
        let timer = SectionTimer()
        var cells: [Cell] = []
        let stamp = Self.stamp()
        /// Published after every cell, so a run cut short keeps what it measured.
        func deliver() throws {
            let report = Report(machine: machine, method: method, callsPerCell: calls, cells: cells, load: timer.finish())
            guard !options.has("no-publish") else { return }
            for path in try publish(report, markdown: FirstFrameMarkdown.render(report), in: paths.results, stamp: stamp) { progress("wrote \(path)") }
        }
        for sender in senders {
            for codec in codecs {
                let cellTimer = SectionTimer()
                guard sender.sends(codec) else {
                    cells.append(Cell(codec: codec, sender: sender, calls: [], note: "aiortc has no \(codec) encoder", load: cellTimer.finish()))
                    continue
                }
                cells.append(try await runCell(codec: codec, sender: sender, calls: calls, python: python, work: paths.work))
                try deliver()
            }
        }
        try deliver()
        print(FirstFrameMarkdown.render(Report(machine: machine, method: method, callsPerCell: calls, cells: cells, load: timer.finish())))
        return 0
    }

    static func runCell(codec: String, sender: FirstFrameSender, calls: Int, python: String, work: String) async throws -> Cell {
        let timer = SectionTimer()
        var configuration = ReferenceServiceConfiguration()
        configuration.iceServers = []
        configuration.acd.queueEntryDelay = 0
        configuration.openAgents = true
        let service = try ReferenceService(configuration: configuration)
        let base = try await service.start(host: "127.0.0.1", port: 0).absoluteString.trimmingCharacters(in: CharacterSet(charactersIn: "/"))
        let parameters = ConnectParameters(videoWidth: 640, videoHeight: 480, videoCodec: codec, noAudioProcessing: true)
        let bot = try AgentBot(configuration: AgentBotConfiguration(serviceUrl: base, name: "FirstFrame", queues: ["default"], parameters: parameters))
        try await bot.connect()
        try await bot.ready()
        Logger.setLevel(logLevel: .error)
        // The SDK caller needs an ICE server to connect (the seed's rule); host candidates do the work on loopback.
        let sdk = try ECVSdk(config: ECVSdkConfiguration(name: "first-frame", serviceUrl: base,
                                                         iceServers: [ECVProtocol.ICEServer(urls: ["stun:127.0.0.1:3478"])]))
        let context = FirstFrameContext(codec: codec, sender: sender, sdk: sdk, bot: bot, base: base, python: python, work: work)
        var results: [FirstFrameCall] = []
        var note: String?
        for index in 1...calls {
            let phase = Locked("starting")
            // A call that never ends (seen once at load 106: the bot's hang-up waited on a recording
            // whose muxer was blocked) is recorded as such; the cell stops there, since its bot may
            // still hold that call.
            guard let result = await bounded(.seconds(150), { await context.call(index, phase: phase) }) else {
                results.append(FirstFrameCall(index: index, failure: "did not end within 150 s, stuck at: \(phase.value)",
                                              load: MachineInfo.loadAverage().first ?? 0))
                note = "stopped after call \(index) of \(calls), which did not end (\(phase.value))"
                progress("first-frame \(codec) from \(sender.rawValue): \(note!)")
                break
            }
            results.append(result)
            progress("first-frame \(codec) from \(sender.rawValue) call \(index)/\(calls): connected→frame "
                     + "\(result.connectedToFirstFrameMs.map { String(format: "%.0f ms", $0) } ?? "–"), attach→written "
                     + "\(result.attachToFirstWrittenMs.map { String(format: "%.0f ms", $0) } ?? "–")"
                     + (result.failure.map { " (\($0))" } ?? ""))
        }
        if await bounded(.seconds(30), { await bot.logout() }) == nil { progress("first-frame: the bot's logout did not end in 30 s") }
        if await bounded(.seconds(30), { await service.stop() }) == nil { progress("first-frame: the service did not stop in 30 s") }
        return Cell(codec: codec, sender: sender, calls: results,
                    connectedToFirstFrame: LatencySummary(milliseconds: results.compactMap(\.connectedToFirstFrameMs)),
                    attachToFirstWritten: LatencySummary(milliseconds: results.compactMap(\.attachToFirstWrittenMs)),
                    startRecordingReturned: LatencySummary(milliseconds: results.compactMap(\.startRecordingReturnedMs)),
                    senderSawRequest: LatencySummary(milliseconds: results.compactMap { $0.senderKeyFrameRequestsMs?.first { $0 >= 0 } }),
                    note: note, load: timer.finish())
    }

    static func stamp() -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMdd'T'HHmmss'Z'"
        return formatter.string(from: Date())
    }

    /// `operation`'s result, or nil when it has not ended after `limit` (it is left running).
    static func bounded<T: Sendable>(_ limit: Duration, _ operation: @escaping @Sendable () async -> T) async -> T? {
        let outcome = Locked<T?>(nil)
        Task { let value = await operation(); outcome.withLock { $0 = value } }
        let deadline = ContinuousClock.now + limit
        while outcome.value == nil, ContinuousClock.now < deadline {
            // Cancelled: the wait ends early and the loop looks again.
            try? await Task.sleep(for: .milliseconds(20))
        }
        return outcome.value
    }

    static func publish(_ report: Report, markdown: String, in directory: String, stamp: String) throws -> [String] {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let json = try encoder.encode(report)
        var written: [String] = []
        for name in ["first-frame-\(stamp)", "first-frame-latest"] {
            let base = (directory as NSString).appendingPathComponent(name)
            try json.write(to: URL(fileURLWithPath: base + ".json"))
            try markdown.write(toFile: base + ".md", atomically: true, encoding: .utf8)
            written += [base + ".json", base + ".md"]
        }
        return written
    }
}

enum FirstFrameMarkdown {
    static func render(_ report: FirstFrameBenchmark.Report) -> String {
        let machine = report.machine
        var lines = ["# Time to first remote frame, \(machine.date)", "",
                     "\(machine.cpuModel), \(machine.cores) cores, \(machine.gstreamer), \(machine.swift); load average at start "
                        + machine.loadAverage.map { String(format: "%.2f", $0) }.joined(separator: " / ") + ".", "",
                     report.method, "",
                     "| codec | sender | calls measured / run | connected → first frame p50 / p95 / max ms | attach → first frame written p50 / p95 / max ms | startRecording returned p50 / p95 ms | load (start–end) |",
                     "| --- | --- | ---: | ---: | ---: | ---: | --- |"]
        func three(_ summary: LatencySummary?) -> String {
            summary.map { String(format: "%.0f / %.0f / %.0f", $0.p50, $0.p95, $0.max) } ?? "–"
        }
        for cell in report.cells {
            if cell.calls.isEmpty {
                lines.append("| \(cell.codec) | \(cell.sender.rawValue) | – | \(cell.note ?? "not run") | | | |")
                continue
            }
            lines.append("| \(cell.codec) | \(cell.sender.rawValue) | \(cell.connectedToFirstFrame?.count ?? 0)/\(cell.attachToFirstWritten?.count ?? 0) of \(cell.calls.count) | "
                + "\(three(cell.connectedToFirstFrame)) | \(three(cell.attachToFirstWritten)) | "
                + (cell.startRecordingReturned.map { String(format: "%.0f / %.0f", $0.p50, $0.p95) } ?? "–")
                + " | \(String(format: "%.1f–%.1f", cell.load.start, cell.load.end)) |")
        }
        let requests = report.cells.filter { $0.senderSawRequest != nil }
        if !requests.isEmpty {
            lines += ["", "When the foreign sender itself saw the recorder's key-frame request, ms after `startRecording` was called "
                      + "(Chromium: its `pliCount`/`firCount` sampled every 100 ms, so up to 100 ms late; aiortc: when its sender answered it):", "",
                      "| codec | sender | calls | p50 | p95 | max |", "| --- | --- | ---: | ---: | ---: | ---: |"]
            for cell in requests {
                guard let seen = cell.senderSawRequest else { continue }
                lines.append("| \(cell.codec) | \(cell.sender.rawValue) | \(seen.count) | "
                             + String(format: "%.0f | %.0f | %.0f |", seen.p50, seen.p95, seen.max))
            }
        }
        lines += ["", "Percentiles are nearest-rank over the calls measured; *calls measured / run* gives the calls with each figure "
                  + "(connected → frame / attach → written) of those run.", ""]
        let failures = report.cells.flatMap { cell in cell.calls.compactMap { call in
            call.failure.map { "- \(cell.codec) from \(cell.sender.rawValue), call \(call.index): \($0)" } } }
        let notes = report.cells.filter { !$0.calls.isEmpty }.compactMap { cell in cell.note.map { "- \(cell.codec) from \(cell.sender.rawValue): \($0)" } }
        if !failures.isEmpty || !notes.isEmpty {
            lines += ["Calls that failed or were not measured in full, and cells cut short:", ""] + failures + notes + [""]
        }
        lines.append(String(format: "Load average (1 min) %.2f at the start, %.2f at the end; %.0f s in all.",
                            report.load.start, report.load.end, report.load.wallSeconds))
        return lines.joined(separator: "\n") + "\n"
    }
}
