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
    /// "recording (passthrough)" or "decoding".
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
                row("start() → WebRtcConnected", section.total), "", load(section.load), ""]
    }

    static func callCostTable(_ section: CallCostSection) -> [String] {
        var lines = ["## Cost of a call (agent bots in one process)", "", section.method, "",
                     "| mode | calls | flowing | window s | CPU % (of one core) | CPU %/call | RSS MiB | RSS MiB/call |",
                     "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
        for figure in section.figures {
            lines.append("| \(figure.mode) | \(figure.calls) | \(figure.callsFlowing) | \(number(figure.windowSeconds, 0)) | "
                + "\(number(figure.cpuPercent, 1)) | \(number(figure.cpuPercentPerCall, 2)) | \(number(figure.rssMiB, 0)) | "
                + "\(number(figure.rssPerCallMiB, 1)) |")
        }
        return lines + ["", load(section.load), ""]
    }
}
