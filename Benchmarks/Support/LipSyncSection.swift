/// Lip sync: where a sender's sound lands against its picture in an ECVKit recording.
package struct LipSyncSection: Codable, Sendable {
    package var method: String
    package var figures: [LipSyncFigure]
    package var load: LoadWindow?

    package init(method: String, figures: [LipSyncFigure], load: LoadWindow?) {
        self.method = method
        self.figures = figures
        self.load = load
    }
}

package struct LipSyncFigure: Codable, Sendable {
    /// Who sent the clip, with what ("ECVKit, audio processing on").
    package var sender: String
    package var calls: Int
    /// Audio minus video (ms) of every flash measured, call after call.
    package var offsetsMs: [Double]
    /// Each call's mean offset (ms).
    package var callMeansMs: [Double]
    /// The largest standard deviation of one call's offsets (ms).
    package var worstCallStdMs: Double?
    /// Seconds from the first flash to the first whose offset, and every later one's, stays within
    /// 10 ms of the call's mean (the worst call; flashes come once a second).
    package var worstStableAfterSeconds: Double?
    package var failures: [String]

    package init(sender: String, calls: Int, offsetsMs: [Double], callMeansMs: [Double], worstCallStdMs: Double?,
                worstStableAfterSeconds: Double?, failures: [String]) {
        self.sender = sender
        self.calls = calls
        self.offsetsMs = offsetsMs
        self.callMeansMs = callMeansMs
        self.worstCallStdMs = worstCallStdMs
        self.worstStableAfterSeconds = worstStableAfterSeconds
        self.failures = failures
    }

    /// LiveKit egress's "good" bounds: a stable offset within 50 ms, std at most 10 ms, never
    /// beyond 100 ms, stable within 1 s.
    package var withinGoodBounds: Bool {
        guard !offsetsMs.isEmpty, failures.isEmpty else { return false }
        let stable = callMeansMs.allSatisfy { abs($0) <= 50 }
        return stable && (worstCallStdMs ?? .infinity) <= 10 && offsetsMs.allSatisfy { abs($0) <= 100 }
            && (worstStableAfterSeconds ?? .infinity) <= 1
    }
}

extension MarkdownReport {
    static func lipSyncTable(_ section: LipSyncSection) -> [String] {
        var lines = ["## Lip sync (a flash/beep clip into an ECVKit recording)", "", section.method, "",
                     "| sender | calls | flashes | offset ms, median (range of call means) | worst call's std ms | max abs ms | stable after s | LiveKit \"good\" |",
                     "| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
        for figure in section.figures {
            let sorted = figure.offsetsMs.sorted()
            let median = sorted.isEmpty ? nil : sorted[sorted.count / 2]
            let range = figure.callMeansMs.isEmpty ? "" : " (\(number(figure.callMeansMs.min()!, 1))–\(number(figure.callMeansMs.max()!, 1)))"
            let failed = figure.failures.isEmpty ? "" : "; \(figure.failures.count) failed: \(figure.failures.joined(separator: " · "))"
            lines.append("| \(figure.sender) | \(figure.calls) | \(figure.offsetsMs.count) | \(median.map { number($0, 1) } ?? "–")\(range) | "
                + "\(figure.worstCallStdMs.map { number($0, 1) } ?? "–") | \(sorted.map { abs($0) }.max().map { number($0, 1) } ?? "–") | "
                + "\(figure.worstStableAfterSeconds.map { number($0, 1) } ?? "–") | \(figure.withinGoodBounds ? "yes" : "no")\(failed) |")
        }
        return lines + ["", load(section.load), ""]
    }
}
