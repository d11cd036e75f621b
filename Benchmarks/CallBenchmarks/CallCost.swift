import BenchmarkSupport
import ECV
import ECVAgent
import ECVProtocol
import ECVService
import Foundation
import GLibCore
import GStreamer

/// The cost of concurrent agent calls: N bots in one or several child processes (so their CPU and
/// memory are their own) take N calls from a load generator in another child (`bench-call load`,
/// callers that send a clip encoded once), routed by the reference service in this process.
enum CallCostBenchmark: CallBenchmark {
    static let name = "cost"
    static let maximumCalls = 400
    /// Callers per load-generator process, by default (`--callers-per-load-process`).
    static let callersPerLoadProcess = 75
    static let callSize = (width: 320, height: 240, fps: 15)
    static let method = """
        Bots: `bench-call cost-agents` child processes (one, or several sharing the calls) of receive-only agent bots \
        logged in to the reference service that runs in this process; its ACD routes each call to a free bot. \
        Callers: `bench-call load`, another child: real ECV callers (SDK, reference service, webrtcbin ICE/DTLS-SRTP) \
        whose send graphs are fed a 10 s 320×240 15 fps VP8 + 20 ms Opus clip encoded once at start (appsrc → \
        payloader, no encoder; one thread paces every call; a PLI/FIR jumps to the clip's nearest key frame; \
        buffers are stamped when pushed, so timestamps rise across loops). Bots only receive; recording bots' jitter buffers wait 1 s. Recording: each bot records its call to \
        Matroska without decoding. Decoding: each bot decodes video to RGBA and audio to samples. Receive only: each bot \
        receives (1 s jitter buffers) and drops the media, webrtcbin's receive path alone. Once every call \
        is connected and has run 3 s, each process's CPU (/proc utime+stime) is measured over the window; RSS, \
        threads and descriptors at its end. Per call = (sum over bot processes − the same processes with their bots \
        logged in and no call) ÷ N. After the calls end, every recording's caller tracks are counted \
        (`RecordingInspector`): complete = at least what was sent in the window, and no more than 1 % + 2 frames \
        short of the recording's own span. Pion beside it (`--stacks ecvkit,pion`, runs alternated): `Benchmarks/pion`, a \
        benchmark-only Go peer on Debian's Pion 3.1.56 (default codecs and interceptors, host candidates, no jitter buffer), \
        speaking the same agent and room protocol to the same service: its bots record with Pion's IVF/Ogg writers \
        (save-to-disk style) or read and drop the media, against ECVKit's callers; its callers send the same clip from one \
        pacing goroutine to ECVKit's receive-only bots (`send`: the callers' CPU, RSS, threads and descriptors per call \
        above their ready baseline). A Pion recording is complete when its IVF holds at least the window's frames and its Ogg some audio. \
        webrtcbin beside them (`--stacks ecvkit,webrtcbin,pion`, receive and record): `bench-call webrtcbin-agents`, bots built from the \
        GStreamer binding alone, one pipeline per call with one webrtcbin and its defaults (max-bundle, 200 ms jitter buffers, host candidates), \
        recvonly VP8 (NACK, PLI, FIR) and Opus, each stream into a fakesink (sync and async off) or depayloaded into matroskamux → filesink; \
        the same agent and room protocol, against ECVKit's callers: the floor webrtcbin 1.22 itself sets under ECVKit's bots.
        """

    /// Whose peers are measured: ECVKit's (`cost-agents`, `load`), bare webrtcbin bots' (`webrtcbin-agents`:
    /// webrtcbin 1.22's own cost for the bots' job, the floor under ECVKit's) or Pion's (`PionPeer`).
    enum Stack: String, CaseIterable {
        case ecvkit = "ECVKit", webrtcbin = "webrtcbin", pion = "Pion"
    }

    struct Tier {
        var stack: Stack = .ecvkit
        var mode: String
        var calls: Int
        var processes: Int
        /// Calls the load generator sets up at once (its `--concurrency`).
        var concurrency: Int
        /// The bots' jitter buffer (`--jitter-buffer-ms`, `AgentBotConfiguration.jitterBufferLatencyMs`);
        /// nil: 1 s for recording bots, the SDK's 100 ms for decoding ones.
        var jitterBufferMs: Int?
        /// Callers per load-generator process: the calls are split over as many as that takes.
        var callersPerLoadProcess: Int
    }

    static func run(options: Options, report: inout BenchmarkReport) async throws {
        let smoke = options.has("smoke")
        var modes: [(String, [Int])] = smoke ? [("record", [2]), ("decode", [1]), ("receive", [1])]
            : [("record", [50, 100, 200, 300]), ("decode", [10, 20, 40]), ("receive", [50, 100, 200]), ("send", [50, 100])]
        if let only = options.values["calls"] { modes = try parseTiers(only) }
        let processCounts = try (options.values["processes"] ?? "1").split(separator: ",").map { text in
            guard let value = Int(text), (1...16).contains(value) else { throw BenchmarkError.badInput("--processes takes 1…16, got \(text)") }
            return value
        }
        let concurrency = try options.int("concurrency", default: LoadGenerator.defaultConcurrency, range: 1...maximumCalls)
        let jitterBufferMs = try options.values["jitter-buffer-ms"].map { _ in try options.int("jitter-buffer-ms", default: 0, range: 0...10_000) }
        let callersPerLoadProcess = try options.int("callers-per-load-process", default: Self.callersPerLoadProcess, range: 1...maximumCalls)
        let window = smoke ? 2.0 : try Double(options.int("window", default: 8, range: 2...120))
        let repeats = try options.int("repeats", default: 1, range: 1...10)
        // A smoke run (the test suite's) builds no Go: Pion only when asked for.
        var stacks = try (options.values["stacks"] ?? (smoke ? "ecvkit" : "ecvkit,pion")).split(separator: ",").map { name in
            guard let stack = Stack.allCases.first(where: { $0.rawValue.lowercased() == name.lowercased() }) else {
                throw BenchmarkError.badInput("--stacks takes ecvkit, webrtcbin and pion, got \(name)")
            }
            return stack
        }
        let work = URL(fileURLWithPath: options.values["work"] ?? NSTemporaryDirectory())
        var pion: PionRun?
        if stacks.contains(.pion) {
            do {
                pion = try await PionRun.prepare(work: work)
            } catch {
                // Go and Debian's Pion are benchmark-only packages (`make bench-deps`): without them the
                // ECVKit tiers still run, and the report says the Pion columns are missing.
                progress("cost: no Pion runs: \(error)")
                stacks.removeAll { $0 == .pion }
            }
        }
        let timer = SectionTimer()
        var figures: [CallCostFigure] = []
        for (mode, counts) in modes {
            for calls in counts {
                for processes in processCounts where processes <= calls {
                    // Runs alternated between the stacks, so a change in the machine's load falls on both.
                    for _ in 0..<repeats {
                        for stack in stacks where stack == .ecvkit || (stack == .pion ? pionModes : webrtcbinModes).contains(mode) {
                            var tier = Tier(mode: mode, calls: calls, processes: processes, concurrency: concurrency, jitterBufferMs: jitterBufferMs,
                                            callersPerLoadProcess: callersPerLoadProcess)
                            tier.stack = stack
                            figures.append(await measureOrReport(tier, window: window, work: work, pion: pion))
                        }
                    }
                }
            }
        }
        var section = CallCostSection(method: method, figures: figures, load: timer.finish())
        section.pionComparison = PionComparison.rows(figures)
        report.callCost = section
    }

    /// What each `--calls` mode's bots do with the caller's media: record it, decode it, or
    /// receive it and drop it (`receive`: webrtcbin's receive path alone, the floor under the other
    /// two). `send` measures the callers instead: the stack under test sends the clip, to ECVKit
    /// receive-only bots in both stacks' runs.
    static let modes = ["record": "recording (passthrough)", "decode": "decoding", "receive": "receive only (dropped)",
                        "send": "sending (pre-encoded clip)"]
    /// The modes Pion plays too (a Pion bot decodes nothing).
    static let pionModes: Set<String> = ["record", "receive", "send"]
    /// The modes the bare webrtcbin bots play: they have no callers of their own.
    static let webrtcbinModes: Set<String> = ["record", "receive"]

    private static func measureOrReport(_ tier: Tier, window: Double, work: URL, pion: PionRun?) async -> CallCostFigure {
        let name = "\(tier.stack.rawValue) \(tier.mode) ×\(tier.calls) in \(tier.processes)"
        do {
            let figure = try await measure(tier, window: window, work: work, pion: pion)
            let (cpu, rss, threads) = figure.subjectPerCall
            progress(String(format: "cost: %@: %.2f %% CPU/call, %.2f MiB/call, %.1f threads/call (bots %.1f %%, load %.1f %%, load average %.1f), complete %@",
                            name, cpu, rss, threads, figure.cpuPercent, figure.loadCpuPercent ?? 0, figure.loadAverage ?? 0,
                            figure.recordingsComplete.map { "\($0)/\(tier.calls)" } ?? "–"))
            return figure
        } catch {
            // A tier that broke down (a child too starved to answer) is a result too; the next tier still runs.
            progress("cost: \(name) failed: \(error)")
            var failed = CallCostFigure(mode: modeLabel(tier.mode), calls: tier.calls, callsFlowing: 0,
                                        windowSeconds: window, cpuPercent: 0, rssMiB: 0, rssPerCallMiB: 0, cpuPercentPerCall: 0)
            failed.botProcesses = tier.processes
            failed.stack = tier.stack.rawValue
            failed.failure = "\(error)"
            return failed
        }
    }

    static func modeLabel(_ mode: String) -> String { modes[mode] ?? mode }

    /// `--calls record=50,100;decode=10;receive=50`: measures only these tiers.
    static func parseTiers(_ text: String) throws -> [(String, [Int])] {
        try text.split(separator: ";").map { tier in
            let parts = tier.split(separator: "=")
            guard parts.count == 2, modes[String(parts[0])] != nil else {
                throw BenchmarkError.badInput("--calls wants mode=N,N;mode=N with mode record, decode, receive or send, got \(tier)")
            }
            let counts = try parts[1].split(separator: ",").map { count in
                guard let value = Int(count), (1...maximumCalls).contains(value) else { throw BenchmarkError.badInput("--calls: \(count) is not 1…\(maximumCalls)") }
                return value
            }
            return (String(parts[0]), counts)
        }
    }

    static func measure(_ tier: Tier, window: Double, work: URL, pion: PionRun?) async throws -> CallCostFigure {
        // `ECV_BENCH_BOT_STUN=none`: no STUN server in the rooms' configuration either (`CostAgents`).
        let (service, base) = ProcessInfo.processInfo.environment["ECV_BENCH_BOT_STUN"] == "none"
            ? try await CallSetupBenchmark.startService(iceServers: []) : try await CallSetupBenchmark.startService()
        let recordings = work.appendingPathComponent("cost-\(tier.stack.rawValue)-\(tier.mode)-\(tier.calls)x\(tier.processes)")
        let sending = tier.mode == "send"
        // Pion bots for Pion's record and receive runs; ECVKit's receive-only bots answer both stacks' senders.
        let pionBots = tier.stack == .pion && !sending, pionCallers = tier.stack == .pion && sending
        if tier.stack == .pion && pion == nil { throw BenchmarkError.badInput("the Pion peer was not built") }
        try? FileManager.default.removeItem(at: recordings) // why: a previous run's files, if any
        try FileManager.default.createDirectory(at: recordings, withIntermediateDirectories: true)
        var bots: [BenchChild] = []
        defer { for child in bots { child.stop() } }
        for index in 0..<tier.processes {
            let share = tier.calls / tier.processes + (index < tier.calls % tier.processes ? 1 : 0)
            bots.append(try BenchChild(arguments: [tier.stack == .webrtcbin ? "webrtcbin-agents" : "cost-agents", "--service-url", base, "--bots", String(share), "--first", String(bots.count * 1000),
                                                   "--mode", sending ? "receive" : tier.mode, "--dir", recordings.path]
                                                   + (tier.jitterBufferMs.map { ["--jitter-buffer-ms", String($0)] } ?? []),
                                       executable: pionBots ? pion?.executable : nil))
        }
        for child in bots { try await child.waitFor("ready", timeout: .seconds(120)) }
        // Callers are separate devices: one load process per `callersPerLoadProcess` calls, so no
        // caller waits behind hundreds of others for one process's main loop or pacing thread.
        let loadProcesses = (tier.calls + tier.callersPerLoadProcess - 1) / tier.callersPerLoadProcess
        var loads: [BenchChild] = []
        defer { for child in loads { child.stop() } }
        for index in 0..<loadProcesses {
            let share = tier.calls / loadProcesses + (index < tier.calls % loadProcesses ? 1 : 0)
            loads.append(try BenchChild(arguments: ["load", "--service-url", base, "--calls", String(share),
                                                    "--concurrency", String(max(1, tier.concurrency / loadProcesses))]
                                                    + (pionCallers ? ["--clip", pion?.clip.path ?? ""] : []),
                                        executable: pionCallers ? pion?.executable : nil))
        }
        for child in loads { try await child.waitFor("ready", timeout: .seconds(120)) }
        try await Task.sleep(for: .seconds(1))
        let pids = bots.map(\.pid)
        let baseline = (rss: pids.map(ProcStat.rssMiB).reduce(0, +), threads: pids.map(ProcStat.threads).reduce(0, +),
                        fds: pids.map(ProcStat.descriptors).reduce(0, +))
        let loadBaseline = ProcStat.footprint(loads.map(\.pid))
        for child in loads { child.send("dial") }
        let callersConnected = { loads.map { $0.status["connected"] ?? 0 }.reduce(0, +) }
        let recording = tier.mode == "record"
        let deadline = ContinuousClock.now + .seconds(30 + tier.calls / 2)
        var ticks = 0
        while ContinuousClock.now < deadline {
            let ready = bots.map { $0.status[recording ? "recording" : "connected"] ?? 0 }.reduce(0, +)
            if ready >= tier.calls, callersConnected() >= tier.calls { break }
            try await Task.sleep(for: .milliseconds(250))
            ticks += 1
            if ticks % 20 == 0 { progress("cost: setting up: " + lastStatus(loads: loads, bots: bots)) }
        }
        if callersConnected() < tier.calls { progress("cost: \(tier.calls) calls: the callers saw \(callersConnected()) connected") }
        try await Task.sleep(for: .seconds(3))
        let flowingBefore = bots.map { $0.status["connected"] ?? 0 }.reduce(0, +)
        for child in loads { child.send("mark") }
        var windowStarts: [String] = []
        for child in loads { windowStarts.append(try await child.waitFor("counts ", timeout: .seconds(180))) }
        let loadPids = loads.map(\.pid)
        let cpu = { (pids.map(ProcStat.cpuSeconds).reduce(0, +), loadPids.map(ProcStat.cpuSeconds).reduce(0, +), ProcStat.cpuSeconds(getpid())) }
        let threadsBefore = (bots: pids.map(ProcStat.cpuSecondsByThread), load: loadPids.map(ProcStat.cpuSecondsByThread))
        let loadAverage = ProcStat.loadAverage()
        let before = cpu()
        try await Task.sleep(for: .seconds(window))
        let after = cpu()
        let threadsAfter = (bots: pids.map(ProcStat.cpuSecondsByThread), load: loadPids.map(ProcStat.cpuSecondsByThread))
        let rss = pids.map(ProcStat.rssMiB).reduce(0, +), threads = pids.map(ProcStat.threads).reduce(0, +)
        let fds = pids.map(ProcStat.descriptors).reduce(0, +)
        let loadFootprint = ProcStat.footprint(loadPids)
        let flowing = min(flowingBefore, bots.map { $0.status["connected"] ?? 0 }.reduce(0, +))
        progress("cost: window end: " + lastStatus(loads: loads, bots: bots))
        for child in loads { child.send("hangup") }
        for child in loads { try await child.waitFor("done", timeout: .seconds(180)) }
        let totals = loads.map { $0.last("counts ") ?? "{}" } // the counts printed at hangup, the last before "done"
        // Recordings are finalised as each call ends; give the bots time to see every hangup.
        let ended = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < ended, bots.contains(where: { ($0.status["connected"] ?? 0) + ($0.status["recording"] ?? 0) > 0 }) {
            try await Task.sleep(for: .milliseconds(250))
        }
        for child in bots { child.stop() }
        await service.stop()
        logEvents(loads: loads, bots: bots)
        var figure = CallCostFigure(mode: modeLabel(tier.mode), calls: tier.calls, callsFlowing: flowing,
                                    windowSeconds: window, cpuPercent: (after.0 - before.0) / window * 100, rssMiB: rss,
                                    rssPerCallMiB: max(0, rss - baseline.rss) / Double(tier.calls),
                                    cpuPercentPerCall: (after.0 - before.0) / window * 100 / Double(tier.calls))
        figure.botProcesses = tier.processes
        figure.stack = tier.stack.rawValue
        figure.loadAverage = loadAverage
        figure.loadCpuPercent = (after.1 - before.1) / window * 100
        figure.loadRssPerCallMiB = max(0, loadFootprint.rss - loadBaseline.rss) / Double(tier.calls)
        figure.loadThreadsPerCall = (loadFootprint.threads - loadBaseline.threads) / Double(tier.calls)
        figure.loadFdsPerCall = (loadFootprint.fds - loadBaseline.fds) / Double(tier.calls)
        figure.serviceCpuPercent = (after.2 - before.2) / window * 100
        figure.threadsPerCall = (threads - baseline.threads) / Double(tier.calls)
        figure.fdsPerCall = (fds - baseline.fds) / Double(tier.calls)
        // A thread that ended in the window is missing from `after`: its share is left out (a few calls' set-up threads).
        func perCall(_ before: [String: Double], _ after: [String: Double]) -> [String: Double] {
            after.reduce(into: [:]) { result, entry in
                result[entry.key] = max(0, entry.value - (before[entry.key] ?? 0)) / window * 100 / Double(tier.calls)
            }
        }
        figure.botCpuByThread = perCall(threadsBefore.bots.reduce(into: [:]) { $0.merge($1, uniquingKeysWith: +) },
                                        threadsAfter.bots.reduce(into: [:]) { $0.merge($1, uniquingKeysWith: +) })
        figure.loadCpuByThread = perCall(threadsBefore.load.reduce(into: [:]) { $0.merge($1, uniquingKeysWith: +) },
                                         threadsAfter.load.reduce(into: [:]) { $0.merge($1, uniquingKeysWith: +) })
        figure.loadProcesses = loadProcesses
        func waits(_ children: [BenchChild]) -> String {
            children.map { $0.last("connected ")?.split(separator: " ").last.map(String.init) ?? "–" }.joined(separator: " ")
        }
        figure.mainLoopWait = "callers " + waits(loads) + ", bots " + waits(bots)
        if recording && !pionBots {
            let decoder = JSONDecoder()
            func merged(_ lines: [String]) throws -> [String: ClipPlayer.Counts] {
                try lines.reduce(into: [:]) { $0.merge(try decoder.decode([String: ClipPlayer.Counts].self, from: Data($1.utf8))) { first, _ in first } }
            }
            let sentBeforeWindow = try merged(windowStarts)
            let sent = try merged(totals)
            let count = await RecordingCount.check(directory: recordings, fps: callSize.fps, atWindowStart: sentBeforeWindow, total: sent)
            figure.recordingsChecked = count.checked
            figure.recordingsComplete = count.complete
            figure.framesSent = count.videoFramesSent + count.audioFramesSent
            figure.framesRecorded = count.videoFramesRecorded + count.audioFramesRecorded
            figure.framesMissing = count.framesMissing
            for problem in count.problems { progress("cost: incomplete: \(problem)") }
        }
        if recording && pionBots {
            figure.recordingsChecked = tier.calls
            figure.recordingsComplete = pionRecordings(recordings, window: window)
        }
        try? FileManager.default.removeItem(at: recordings) // why: scratch files; a leftover is harmless
        return figure
    }
}

/// Pion's recordings (an IVF and an Ogg file per call): how many hold at least the window's video
/// frames (the IVF header's frame count, written at close) and some audio. A call without files
/// counts as incomplete.
private func pionRecordings(_ directory: URL, window: Double) -> Int {
    // why: no directory holds no recordings
    let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
    let videos = names.filter { $0.hasSuffix(".ivf") }
    let complete = videos.filter { name in
        let video = directory.appendingPathComponent(name), audio = video.deletingPathExtension().appendingPathExtension("ogg")
        guard let header = FileManager.default.contents(atPath: video.path), header.count >= 32,
              let audioSize = (try? FileManager.default.attributesOfItem(atPath: audio.path))?[.size] as? Int else { return false } // why: a missing file is an incomplete recording
        let frames = header[24..<28].enumerated().reduce(0) { $0 | Int($1.element) << (8 * $1.offset) }
        return Double(frames) >= window * Double(CallCostBenchmark.callSize.fps) && audioSize > 4096
    }
    return complete.count
}

/// The children's last status lines (calls connected, recording, main-loop wait p50/max ms), for the log.
private func lastStatus(loads: [BenchChild], bots: [BenchChild]) -> String {
    func lines(_ children: [BenchChild]) -> String {
        children.map { $0.last("connected ").map { "connected " + $0 } ?? "-" }.joined(separator: " | ")
    }
    return "callers: " + lines(loads) + "; bots: " + lines(bots)
}

/// The calls' events by kind, counted per side: an `event <rtcId> <kind> [detail]` line counts as
/// `<kind>`, and as `<kind> <detail>` for an end (`ended CALLER_HANGUP`).
private func logEvents(loads: [BenchChild], bots: [BenchChild]) {
    for (side, events) in [("callers", loads.flatMap { $0.all("event ") }), ("bots", bots.flatMap { $0.all("event ") })] where !events.isEmpty {
        var counts: [String: Int] = [:]
        for event in events {
            let words = event.split(separator: " ").dropFirst()
            let kind = words.first == "ended" ? words.prefix(2).joined(separator: " ") : String(words.first ?? "")
            counts[kind, default: 0] += 1
        }
        progress("cost: \(side)' events: " + counts.sorted { $0.value > $1.value }.map { "\($0.key) ×\($0.value)" }.joined(separator: "; "))
    }
}
