/// Call setup time: how long a caller waits, split at the moment the agent connects.
public struct CallSetupSection: Codable, Sendable {
    public var method: String
    public var calls: Int
    /// start() → AgentConnected (dial, queue, routing, the agent's accept).
    public var toAgentConnected: LatencySummary?
    /// AgentConnected → WebRtcConnected (join, signaling, ICE, DTLS): the ≤ 300 ms target.
    public var agentToMedia: LatencySummary?
    /// AgentConnected → first decoded agent frame at the caller.
    public var agentToFirstFrame: LatencySummary?
    public var total: LatencySummary?
    /// Each of the caller's events from AgentConnected on, ms after it: where the set-up goes.
    public var steps: [CallSetupStep]?
    public var load: LoadWindow?

    public init(method: String, calls: Int, toAgentConnected: LatencySummary?, agentToMedia: LatencySummary?,
                agentToFirstFrame: LatencySummary?, total: LatencySummary?, load: LoadWindow?) {
        self.method = method
        self.calls = calls
        self.toAgentConnected = toAgentConnected
        self.agentToMedia = agentToMedia
        self.agentToFirstFrame = agentToFirstFrame
        self.total = total
        self.load = load
    }
}

public struct CallSetupStep: Codable, Sendable {
    public var event: String
    public var afterAgentConnected: LatencySummary?

    public init(event: String, afterAgentConnected: LatencySummary?) {
        self.event = event
        self.afterAgentConnected = afterAgentConnected
    }
}

/// What concurrent agent calls cost the process that holds them.
public struct CallCostSection: Codable, Sendable {
    public var method: String
    public var figures: [CallCostFigure]
    public var load: LoadWindow?

    public init(method: String, figures: [CallCostFigure], load: LoadWindow?) {
        self.method = method
        self.figures = figures
        self.load = load
    }
}

public struct CallCostFigure: Codable, Sendable {
    /// "recording (passthrough)", "decoding" or "receive only (dropped)".
    public var mode: String
    public var calls: Int
    /// Calls whose media was flowing during the whole measurement window.
    public var callsFlowing: Int
    public var windowSeconds: Double
    /// CPU of the agent process over the window, percent of one core.
    public var cpuPercent: Double
    public var rssMiB: Double
    /// RSS above the same process with its bots logged in and no call.
    public var rssPerCallMiB: Double
    public var cpuPercentPerCall: Double
    /// How many bot processes shared the calls (nil: one, before the load generator existed).
    public var botProcesses: Int?
    /// CPU of the load generator (the callers, all its processes) over the same window, percent of one core.
    public var loadCpuPercent: Double?
    /// How many processes the callers were split over (nil: one).
    public var loadProcesses: Int?
    /// CPU of the benchmark process itself (the reference service) over the window.
    public var serviceCpuPercent: Double?
    /// Threads and open descriptors of the bot processes above their logged-in baseline, per call.
    public var threadsPerCall: Double?
    public var fdsPerCall: Double?
    /// Recordings checked and found complete (`RecordingCount`); nil when decoding.
    public var recordingsChecked: Int?
    public var recordingsComplete: Int?
    /// Frames the load generator sent over the whole calls, and the recordings hold.
    public var framesSent: Int?
    public var framesRecorded: Int?
    /// Frames the recordings' own spans imply but the files lack.
    public var framesMissing: Int?
    /// CPU over the window per call, percent of one core, by kind of thread (its name with digits
    /// as `#`, e.g. `nicesrc#:src`), for the bot processes and for the load generator.
    public var botCpuByThread: [String: Double]?
    public var loadCpuByThread: [String: Double]?
    /// How long a job waited for each process's GLib main loop at the window's end (`p50/max` ms).
    public var mainLoopWait: String?
    /// Why the tier gave no figures (a child too starved to answer in time); nil when measured.
    public var failure: String?

    public init(mode: String, calls: Int, callsFlowing: Int, windowSeconds: Double, cpuPercent: Double, rssMiB: Double,
                rssPerCallMiB: Double, cpuPercentPerCall: Double) {
        self.mode = mode
        self.calls = calls
        self.callsFlowing = callsFlowing
        self.windowSeconds = windowSeconds
        self.cpuPercent = cpuPercent
        self.rssMiB = rssMiB
        self.rssPerCallMiB = rssPerCallMiB
        self.cpuPercentPerCall = cpuPercentPerCall
    }
}

extension MarkdownReport {
    static func callSetupTable(_ section: CallSetupSection) -> [String] {
        func row(_ name: String, _ summary: LatencySummary?) -> String {
            "| \(name) | \(ms(summary?.p50)) | \(ms(summary?.p95)) | \(ms(summary?.max)) | \(summary?.count ?? 0) |"
        }
        return ["## Call setup time (\(section.calls) calls, caller SDK ↔ reference service ↔ agent bot on loopback)", "",
                section.method, "", "| interval | p50 ms | p95 ms | max ms | calls |", "| --- | ---: | ---: | ---: | ---: |",
                row("start() → AgentConnected", section.toAgentConnected),
                row("AgentConnected → WebRtcConnected", section.agentToMedia),
                row("AgentConnected → first agent frame at the caller", section.agentToFirstFrame),
                row("start() → WebRtcConnected", section.total), ""]
            + (section.steps.map { steps in
                ["The caller's events on the way, ms after AgentConnected:", "", "| event | p50 ms | p95 ms | max ms | calls |",
                 "| --- | ---: | ---: | ---: | ---: |"] + steps.map { row($0.event, $0.afterAgentConnected) } + [""]
            } ?? [])
            + [load(section.load), ""]
    }

    static func callCostTable(_ section: CallCostSection) -> [String] {
        var lines = ["## Cost of a call (agent bots; the load generator apart)", "", section.method, "",
                     "| mode | calls | bot processes | flowing | complete recordings | bots CPU % (of one core) | CPU %/call | RSS MiB | RSS MiB/call "
                        + "| threads/call | fds/call | load generator CPU % (processes) | service CPU % |",
                     "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
        func optional(_ value: Double?, _ digits: Int) -> String { value.map { number($0, digits) } ?? "–" }
        for figure in section.figures {
            if let failure = figure.failure {
                lines.append("| \(figure.mode) | \(figure.calls) | \(figure.botProcesses ?? 1) | failed: \(failure) | | | | | | | | | |")
                continue
            }
            let complete = figure.recordingsComplete.map { "\($0)/\(figure.recordingsChecked ?? 0)" } ?? "–"
            lines.append("| \(figure.mode) | \(figure.calls) | \(figure.botProcesses ?? 1) | \(figure.callsFlowing) | \(complete) | "
                + "\(number(figure.cpuPercent, 1)) | \(number(figure.cpuPercentPerCall, 2)) | \(number(figure.rssMiB, 0)) | "
                + "\(number(figure.rssPerCallMiB, 2)) | \(optional(figure.threadsPerCall, 1)) | \(optional(figure.fdsPerCall, 1)) | "
                + "\(optional(figure.loadCpuPercent, 1)) (\(figure.loadProcesses ?? 1)) | \(optional(figure.serviceCpuPercent, 1)) |")
        }
        let counted = section.figures.filter { $0.framesSent != nil }
        if !counted.isEmpty {
            lines += ["", "Frames per tier (video + audio): sent over the whole calls / in the recordings / missing inside the recordings' spans: "
                + counted.map { "\($0.calls)×\($0.botProcesses ?? 1): \($0.framesSent ?? 0) / \($0.framesRecorded ?? 0) / \($0.framesMissing ?? 0)" }
                .joined(separator: "; ") + "."]
        }
        let threaded = section.figures.filter { $0.botCpuByThread != nil }
        if !threaded.isEmpty {
            lines += ["", "CPU per call by kind of thread, % of one core (thread names, digits as #), over the window:", ""]
            func top(_ kinds: [String: Double]?) -> String {
                (kinds ?? [:]).filter { $0.value >= 0.005 }.sorted { $0.value > $1.value }.prefix(9)
                    .map { "`\($0.key)` \(number($0.value, 2))" }.joined(separator: ", ")
            }
            for figure in threaded {
                lines.append("- \(figure.mode) \(figure.calls)×\(figure.botProcesses ?? 1): bots \(top(figure.botCpuByThread)); "
                    + "load generator \(top(figure.loadCpuByThread))" + (figure.mainLoopWait.map { "; main-loop wait \($0)" } ?? ""))
            }
        }
        return lines + ["", load(section.load), ""]
    }
}
