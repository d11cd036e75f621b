import BenchmarkSupport
import ECV
import ECVAgent
import ECVProtocol
import ECVService
import Foundation
import GLibCore
import GStreamer

/// The cost of concurrent agent calls: N bots in a child process (so its CPU and memory are its
/// own) take N calls placed from this process, either recording them (passthrough, no decoding) or
/// decoding them.
enum CallCostBenchmark: CallBenchmark {
    static let name = "cost"
    static let method = """
        A child process (`bench-call cost-agents`) runs N receive-only agent bots; this process runs the reference \
        service and N callers sending 320×240 VP8 at 15 fps + Opus. Recording: each bot records its call to \
        Matroska without decoding (RTP depayloaded and muxed, the receive branches discard). Decoding: each bot \
        decodes the caller's video to RGBA frames and the audio to samples. Once every call is connected and has \
        run 3 s, the child's CPU time (/proc utime+stime) is measured over the window; RSS (VmRSS) at its end. \
        RSS per call = (RSS − the same child with its bots logged in and no call) ÷ N.
        """

    static func run(options: Options, report: inout BenchmarkReport) async throws {
        let smoke = options.has("smoke")
        var tiers: [(String, [Int])] = smoke ? [("record", [1]), ("decode", [1])] : [("record", [1, 5, 10, 20, 40]), ("decode", [1, 5, 10])]
        if let only = options.values["calls"] { tiers = try parseTiers(only) }
        let window = smoke ? 2.0 : 8.0
        let work = options.values["work"] ?? NSTemporaryDirectory()
        let timer = SectionTimer()
        var figures: [CallCostFigure] = []
        for (mode, counts) in tiers {
            for count in counts {
                figures.append(try await measure(mode: mode, calls: count, window: window, work: work))
                let figure = figures.last!
                progress(String(format: "cost: %@ ×%d: CPU %.1f %%, RSS %.0f MiB (%.1f MiB/call)", mode, count,
                                figure.cpuPercent, figure.rssMiB, figure.rssPerCallMiB))
            }
        }
        report.callCost = CallCostSection(method: method, figures: figures, load: timer.finish())
    }

    /// `--calls record=10,40;decode=5`: measures only these tiers.
    static func parseTiers(_ text: String) throws -> [(String, [Int])] {
        try text.split(separator: ";").map { tier in
            let parts = tier.split(separator: "=")
            guard parts.count == 2, ["record", "decode"].contains(parts[0]) else {
                throw BenchmarkError.badInput("--calls wants mode=N,N;mode=N with mode record or decode, got \(tier)")
            }
            let counts = try parts[1].split(separator: ",").map { count in
                guard let value = Int(count), (1...200).contains(value) else { throw BenchmarkError.badInput("--calls: \(count) is not 1…200") }
                return value
            }
            return (String(parts[0]), counts)
        }
    }

    static func measure(mode: String, calls: Int, window: Double, work: String) async throws -> CallCostFigure {
        let (service, base) = try await CallSetupBenchmark.startService()
        let recordings = URL(fileURLWithPath: work).appendingPathComponent("cost-\(mode)-\(calls)")
        try? FileManager.default.createDirectory(at: recordings, withIntermediateDirectories: true)
        let child = try AgentProcess(arguments: ["cost-agents", "--service-url", base, "--bots", String(calls), "--mode", mode,
                                                 "--dir", recordings.path])
        defer { child.stop() }
        try await child.waitFor("ready", timeout: .seconds(30))
        try await Task.sleep(for: .seconds(1))
        let baseline = ProcStat.rssMiB(child.pid)
        Logger.setLevel(logLevel: .error)
        let sdk = try ECVSdk(config: ECVSdkConfiguration(name: "cost", serviceUrl: base, iceServers: [ICEServer(urls: ["stun:127.0.0.1:3478"])]))
        let parameters = ConnectParameters(videoWidth: 320, videoHeight: 240, videoFps: 15, noAudioProcessing: true)
        var placed: [VideoCall] = []
        var outcomes: [String: Int] = [:]
        try await withThrowingTaskGroup(of: (VideoCall, String)?.self) { group in
            for index in 0..<calls {
                group.addTask {
                    guard let call = await sdk.createVideoCall() else { return nil }
                    let events = call.events()
                    await call.start(dialCallParameters: DialCallParameters(callerName: "Cost \(index)"))
                    var outcome = "no outcome"
                    for await event in events {
                        if event.type == .AgentConnected, let connection = call.connect(parameters: parameters) {
                            connection.localPreviewEnabled = false
                            connection.remoteAudioSink = .discard
                            await connection.startRoom()
                        }
                        if event.type == .WebRtcConnected { outcome = "connected"; break }
                        if event.type == .CallEnded { outcome = "ended \(event.detail ?? "")"; break }
                    }
                    return (call, outcome)
                }
            }
            for try await result in group {
                guard let (call, outcome) = result else { continue }
                placed.append(call)
                outcomes[outcome, default: 0] += 1
            }
        }
        if outcomes["connected"] != calls { progress("cost: \(mode) ×\(calls): callers saw \(outcomes)") }
        try await Task.sleep(for: .seconds(3))
        let connected = child.lastConnected
        let before = ProcStat.cpuSeconds(child.pid)
        try await Task.sleep(for: .seconds(window))
        let cpu = (ProcStat.cpuSeconds(child.pid) - before) / window * 100
        let rss = ProcStat.rssMiB(child.pid)
        let flowing = min(connected, child.lastConnected)
        for call in placed { call.hangup() }
        // Let the hangups reach the service (seconds under this load) before it stops.
        let deadline = ContinuousClock.now + .seconds(10)
        while service.roomCount > 0, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(100)) }
        child.stop()
        await service.stop()
        try? FileManager.default.removeItem(at: recordings)
        return CallCostFigure(mode: mode == "record" ? "recording (passthrough)" : "decoding", calls: calls, callsFlowing: flowing,
                              windowSeconds: window, cpuPercent: cpu, rssMiB: rss, rssPerCallMiB: max(0, rss - baseline) / Double(calls),
                              cpuPercentPerCall: cpu / Double(calls))
    }
}

/// `bench-call cost-agents`: the child side. N receive-only bots that record or decode their calls;
/// prints "ready", then `connected N` once a second.
enum CostAgents {
    static func run(options: Options) async throws {
        guard let base = options.values["service-url"] else { throw BenchmarkError.badInput("--service-url is required") }
        let count = try options.int("bots", default: 1, range: 1...200)
        let decode = options.values["mode"] == "decode"
        let directory = options.values["dir"] ?? NSTemporaryDirectory()
        Logger.setLevel(logLevel: .error)
        try GStreamerRuntime.ensureInitialized()
        var bots: [AgentBot] = []
        for index in 0..<count {
            var configuration = AgentBotConfiguration(serviceUrl: base, name: "Bot \(index)", queues: ["default"],
                                                      parameters: ConnectParameters(videoWidth: 320, videoHeight: 240, noAudioProcessing: true),
                                                      receiveVideo: decode ? .renderer(name: "caller_video") : .discard,
                                                      receiveAudio: decode ? .audioSamples(name: "caller_audio") : .discard)
            configuration.sendsMedia = false
            configuration.iceServers = [ICEServer(urls: ["stun:127.0.0.1:3478"])]
            let bot = try AgentBot(configuration: configuration)
            try await bot.connect()
            try await bot.ready()
            let events = bot.events()
            Task {
                for await case .callStarted(let call) in events where !decode {
                    Task {
                        for await event in call.events() where event == .connected {
                            let url = URL(fileURLWithPath: directory).appendingPathComponent("\(call.rtcId).mkv")
                            _ = try? await call.startRecording(to: url)
                        }
                    }
                }
            }
            bots.append(bot)
        }
        emit("ready")
        while true {
            try await Task.sleep(for: .seconds(1))
            emit("connected \(bots.flatMap(\.calls).filter(\.isConnected).count)")
        }
    }
}

/// One line to the parent, unbuffered.
private func emit(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }

/// The child agent process: its stdout lines, its pid, and a stop.
final class AgentProcess: Sendable {
    private let process: Process
    private let lines = Locked<[String]>([])
    var pid: Int32 { process.processIdentifier }

    init(arguments: [String]) throws {
        process = Process()
        process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        let lines = self.lines
        pipe.fileHandleForReading.readabilityHandler = { handle in
            let text = String(decoding: handle.availableData, as: UTF8.self)
            lines.withLock { $0 += text.split(separator: "\n").map(String.init) }
        }
        try process.run()
    }

    var lastConnected: Int {
        lines.value.last { $0.hasPrefix("connected ") }.flatMap { Int($0.dropFirst(10)) } ?? 0
    }

    func waitFor(_ line: String, timeout: Duration) async throws {
        let deadline = ContinuousClock.now + timeout
        while !lines.value.contains(line) {
            guard process.isRunning, ContinuousClock.now < deadline else {
                throw BenchmarkError.badInput("the agent process did not print \(line)")
            }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    func stop() {
        if process.isRunning { process.terminate() }
    }
}

/// CPU time and resident memory of another process, from /proc.
enum ProcStat {
    static func cpuSeconds(_ pid: Int32) -> Double {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = text.lastIndex(of: ")") else { return 0 }
        let fields = text[text.index(after: close)...].split(separator: " ")
        // After the command: state is field 3, so utime (14) and stime (15) are at 11 and 12.
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    static func rssMiB(_ pid: Int32) -> Double {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = text.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
              let kilobytes = Double(line.split(whereSeparator: { $0 == " " || $0 == "\t" })[1]) else { return 0 }
        return kilobytes / 1024
    }
}
