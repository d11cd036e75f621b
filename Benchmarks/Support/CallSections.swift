/// Call setup time: how long a caller waits, split at the moment the agent connects.
package struct CallSetupSection: Codable, Sendable {
    package var method: String
    package var calls: Int
    /// start() → AgentConnected (dial, queue, routing, the agent's accept).
    package var toAgentConnected: LatencySummary?
    /// AgentConnected → WebRtcConnected (join, signaling, ICE, DTLS): the ≤ 300 ms target.
    package var agentToMedia: LatencySummary?
    /// AgentConnected → first decoded agent frame at the caller.
    package var agentToFirstFrame: LatencySummary?
    package var total: LatencySummary?
    /// Each of the caller's events from AgentConnected on, ms after it: where the set-up goes.
    package var steps: [CallSetupStep]?
    package var load: LoadWindow?

    package init(method: String, calls: Int, toAgentConnected: LatencySummary?, agentToMedia: LatencySummary?,
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

package struct CallSetupStep: Codable, Sendable {
    package var event: String
    package var afterAgentConnected: LatencySummary?

    package init(event: String, afterAgentConnected: LatencySummary?) {
        self.event = event
        self.afterAgentConnected = afterAgentConnected
    }
}

/// What concurrent agent calls cost the process that holds them.
package struct CallCostSection: Codable, Sendable {
    package var method: String
    package var figures: [CallCostFigure]
    /// ECVKit ÷ Pion per mode and call count (nil when no Pion run was made).
    package var pionComparison: [PionComparison]?
    package var load: LoadWindow?

    package init(method: String, figures: [CallCostFigure], load: LoadWindow?) {
        self.method = method
        self.figures = figures
        self.load = load
    }
}

package struct CallCostFigure: Codable, Sendable {
    /// "recording (passthrough)", "decoding" or "receive only (dropped)".
    package var mode: String
    package var calls: Int
    /// Calls whose media was flowing during the whole measurement window.
    package var callsFlowing: Int
    package var windowSeconds: Double
    /// CPU of the agent process over the window, percent of one core.
    package var cpuPercent: Double
    package var rssMiB: Double
    /// RSS above the same process with its bots logged in and no call.
    package var rssPerCallMiB: Double
    package var cpuPercentPerCall: Double
    /// How many bot processes shared the calls (nil: one, before the load generator existed).
    package var botProcesses: Int?
    /// CPU of the load generator (the callers, all its processes) over the same window, percent of one core.
    package var loadCpuPercent: Double?
    /// How many processes the callers were split over (nil: one).
    package var loadProcesses: Int?
    /// CPU of the benchmark process itself (the reference service) over the window.
    package var serviceCpuPercent: Double?
    /// Threads and open descriptors of the bot processes above their logged-in baseline, per call.
    package var threadsPerCall: Double?
    package var fdsPerCall: Double?
    /// Recordings checked and found complete (`RecordingCount`); nil when decoding.
    package var recordingsChecked: Int?
    package var recordingsComplete: Int?
    /// Frames the load generator sent over the whole calls, and the recordings hold.
    package var framesSent: Int?
    package var framesRecorded: Int?
    /// Frames the recordings' own spans imply but the files lack.
    package var framesMissing: Int?
    /// CPU over the window per call, percent of one core, by kind of thread (its name with digits
    /// as `#`, e.g. `nicesrc#:src`), for the bot processes and for the load generator.
    package var botCpuByThread: [String: Double]?
    package var loadCpuByThread: [String: Double]?
    /// How long a job waited for each process's GLib main loop at the window's end (`p50/max` ms).
    package var mainLoopWait: String?
    /// Why the tier gave no figures (a child too starved to answer in time); nil when measured.
    package var failure: String?
    /// Whose peers were measured: "ECVKit" (nil in runs before Pion joined) or "Pion".
    package var stack: String?
    /// The machine's 1-minute load average when the window started.
    package var loadAverage: Double?
    /// The load generator's RSS, threads and descriptors above its ready baseline, per call (the
    /// figures of a sending tier).
    package var loadRssPerCallMiB: Double?
    package var loadThreadsPerCall: Double?
    package var loadFdsPerCall: Double?

    /// The side a tier measures, per call (CPU %, RSS MiB, threads, fds): the callers when sending,
    /// else the bots.
    package var subjectPerCall: (cpu: Double, rss: Double, threads: Double) {
        mode.hasPrefix("sending")
            ? ((loadCpuPercent ?? 0) / Double(max(1, calls)), loadRssPerCallMiB ?? 0, loadThreadsPerCall ?? 0)
            : (cpuPercentPerCall, rssPerCallMiB, threadsPerCall ?? 0)
    }

    package var subjectFdsPerCall: Double { mode.hasPrefix("sending") ? loadFdsPerCall ?? 0 : fdsPerCall ?? 0 }

    package init(mode: String, calls: Int, callsFlowing: Int, windowSeconds: Double, cpuPercent: Double, rssMiB: Double,
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
                     "| stack | mode | calls | bot processes | flowing | complete recordings | bots CPU % (of one core) | CPU %/call | RSS MiB | RSS MiB/call "
                        + "| threads/call | fds/call | load generator CPU % (processes) | service CPU % |",
                     "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
        func optional(_ value: Double?, _ digits: Int) -> String { value.map { number($0, digits) } ?? "–" }
        for figure in section.figures {
            if let failure = figure.failure {
                lines.append("| \(figure.stack ?? "ECVKit") | \(figure.mode) | \(figure.calls) | \(figure.botProcesses ?? 1) | failed: \(failure) | | | | | | | | | |")
                continue
            }
            let complete = figure.recordingsComplete.map { "\($0)/\(figure.recordingsChecked ?? 0)" } ?? "–"
            lines.append("| \(figure.stack ?? "ECVKit") | \(figure.mode) | \(figure.calls) | \(figure.botProcesses ?? 1) | \(figure.callsFlowing) | \(complete) | "
                + "\(number(figure.cpuPercent, 1)) | \(number(figure.cpuPercentPerCall, 2)) | \(number(figure.rssMiB, 0)) | "
                + "\(number(figure.rssPerCallMiB, 2)) | \(optional(figure.threadsPerCall, 1)) | \(optional(figure.fdsPerCall, 1)) | "
                + "\(optional(figure.loadCpuPercent, 1)) (\(figure.loadProcesses ?? 1)) | \(optional(figure.serviceCpuPercent, 1)) |")
        }
        if let comparison = section.pionComparison { lines += [""] + pionComparisonTable(comparison) }
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
                lines.append("- \(figure.stack ?? "ECVKit") \(figure.mode) \(figure.calls)×\(figure.botProcesses ?? 1): bots \(top(figure.botCpuByThread)); "
                    + "load generator \(top(figure.loadCpuByThread))" + (figure.mainLoopWait.map { "; main-loop wait \($0)" } ?? ""))
            }
        }
        return lines + ["", load(section.load), ""]
    }
}
