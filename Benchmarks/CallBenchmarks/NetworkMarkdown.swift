import BenchmarkSupport
import Foundation

/// `bench-call network`'s Markdown: the comparison (medians with ranges, ECVKit ÷ Chromium), the
/// recovery figures, and every run as it came out.
enum NetworkMarkdown {
    typealias Direction = (title: String, figures: KeyPath<NetworkRun, DirectionFigures?>)
    static var directions: [Direction] { [("host ← lab", \.atHost), ("lab ← host", \.atLab)] }

    static func render(_ report: NetworkBenchmark.Report) -> String {
        let machine = report.machine
        var lines = ["# bench-call network", "",
                     "\(machine.cpuModel), \(machine.cores) cores, \(machine.memoryGiB) GiB, \(machine.kernel), \(machine.gstreamer), "
                         + "\(machine.swift), \(machine.date). Load average (1 min) \(format(report.load.start)) at the start, "
                         + "\(format(report.load.end)) at the end; took \(Int(report.load.wallSeconds)) s.", "",
                     report.method, ""]
        let conditions = NetworkCondition.allCases.filter { condition in
            condition.wholePathLossPercent == nil && report.runs.contains { $0.condition == condition }
        }
        if !conditions.isEmpty {
            lines += ["## ECVKit ÷ Chromium", "", "Median (range) of \(report.repetitions) runs per cell.", "",
                      "| condition | receiving end | ECVKit fps | Chromium fps | ratio | ECVKit freeze s | Chromium freeze s | ratio |",
                      "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
        }
        for condition in conditions {
            for stack in ecvkitStacks(report, condition) {
                let ours = runs(report, stack, condition), theirs = runs(report, NetworkChromiumRun.stack, condition)
                let title = stack == NetworkEcvkitRun.defaultStack ? condition.title : "\(condition.title), \(stack)"
                for direction in directions {
                    let fps = (values(ours, direction, \.fps), values(theirs, direction, \.fps))
                    let freeze = (values(ours, direction, \.freezeSeconds), values(theirs, direction, \.freezeSeconds))
                    lines.append("| \(title) | \(direction.title) | \(cell(fps.0)) | \(cell(fps.1)) | \(ratio(fps.0, fps.1)) "
                                 + "| \(cell(freeze.0)) | \(cell(freeze.1)) | \(ratio(freeze.0, freeze.1)) |")
                }
            }
        }
        if !conditions.isEmpty {
            lines += ["", "## Connecting, the longest freeze, media after the blackhole", "",
                      "| condition | stack | runs measured | connect s | longest freeze s, host ← lab | longest freeze s, lab ← host | media back s, host ← lab / lab ← host | host sends kbit/s |",
                      "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
        }
        for condition in conditions {
            for stack in ecvkitStacks(report, condition) + [NetworkChromiumRun.stack] {
                let all = report.runs.filter { $0.stack == stack && $0.condition == condition }
                let measured = runs(report, stack, condition)
                let back = directions.map { cell(values(measured, $0, \.mediaBackSeconds)) }.joined(separator: " / ")
                lines.append("| \(condition.title) | \(stack) | \(measured.count)/\(all.count) | \(cell(measured.compactMap(\.connectSeconds))) "
                             + "| \(cell(values(measured, directions[0], \.longestFreezeSeconds))) | \(cell(values(measured, directions[1], \.longestFreezeSeconds))) "
                             + "| \(condition == .blackhole5 ? back : "—") | \(cell(measured.compactMap(\.hostSendKbps), digits: 0)) |")
            }
        }
        lines += wholePathTable(report)
        lines += ["", "## Every run", "",
                  "| stack | condition | run | load | connect s | fps host / lab | freeze s host / lab | dropped packets | Chromium's own freeze s, whole call, host / lab | failure |",
                  "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
        for run in report.runs {
            let own = run.chromiumFreezeSeconds.map { "\(format($0["atHost"])) / \(format($0["atLab"]))" } ?? "—"
            lines.append("| \(run.stack) | \(run.condition.title) | \(run.repetition) | \(format(run.load.first)) | \(format(run.connectSeconds)) "
                         + "| \(format(run.atHost?.fps)) / \(format(run.atLab?.fps)) | \(format(run.atHost?.freezeSeconds)) / \(format(run.atLab?.freezeSeconds)) "
                         + "| \(run.droppedPackets.map(String.init) ?? "—") | \(own) | \(run.failure.map { $0.replacingOccurrences(of: "|", with: "/") } ?? "") |")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Calls connecting with the loss on the whole path, signaling included: ECVKit's SDK callers and
    /// `ecv agent` through the reference service (several calls a run), Chromium's two pages (one a run).
    static func wholePathTable(_ report: NetworkBenchmark.Report) -> [String] {
        let conditions = NetworkCondition.allCases.filter { condition in
            condition.wholePathLossPercent != nil && report.runs.contains { $0.condition == condition }
        }
        guard !conditions.isEmpty else { return [] }
        var lines = ["", "## Calls connecting with the loss on the whole path, signaling included", "",
                     "ECVKit: \(NetworkEcvkitRun.wholePathCalls) calls a run from SDK callers here to `ecv agent` in the lab through the reference "
                         + "service, dialing to WebRtcConnected; Chromium: one call a run, the second page joining to a first frame both ways, its "
                         + "page and signaling through the loss too.", "",
                     "| condition | stack | calls connected | connect s, median (range) | slowest s |", "| --- | --- | ---: | ---: | ---: |"]
        for condition in conditions {
            for stack in [NetworkEcvkitRun.defaultStack, NetworkChromiumRun.stack] {
                let all = report.runs.filter { $0.stack == stack && $0.condition == condition }
                guard !all.isEmpty else { continue }
                let tried = all.reduce(0) { $0 + ($1.callsTried ?? 1) }
                let seconds = all.flatMap { $0.callConnectSeconds ?? ($0.failure == nil ? $0.connectSeconds.map { [$0] } ?? [] : []) }
                lines.append("| \(condition.title) | \(stack) | \(seconds.count)/\(tried) | \(cell(seconds)) | \(format(seconds.max())) |")
            }
        }
        return lines
    }

    /// One progress line per run.
    static func line(_ run: NetworkRun) -> String {
        if let failure = run.failure { return "network: \(run.stack), \(run.condition.title) #\(run.repetition): FAILED \(failure)" }
        if let tried = run.callsTried {
            return "network: \(run.stack), \(run.condition.title) #\(run.repetition): \(run.callConnectSeconds?.count ?? 0)/\(tried) calls connected in "
                + (run.callConnectSeconds ?? []).map { format($0) }.joined(separator: ", ") + " s"
        }
        return "network: \(run.stack), \(run.condition.title) #\(run.repetition): connect \(format(run.connectSeconds)) s; "
            + "fps \(format(run.atHost?.fps)) / \(format(run.atLab?.fps)), freeze \(format(run.atHost?.freezeSeconds)) / "
            + "\(format(run.atLab?.freezeSeconds)) s (host ← lab / lab ← host)"
            + (run.atHost?.mediaBackSeconds.map { " back after \(format($0)) / \(format(run.atLab?.mediaBackSeconds)) s" } ?? "")
    }

    static func ecvkitStacks(_ report: NetworkBenchmark.Report, _ condition: NetworkCondition) -> [String] {
        [NetworkEcvkitRun.defaultStack, NetworkEcvkitRun.adaptiveStack].filter { stack in
            report.runs.contains { $0.stack == stack && $0.condition == condition }
        }
    }

    static func runs(_ report: NetworkBenchmark.Report, _ stack: String, _ condition: NetworkCondition) -> [NetworkRun] {
        report.runs.filter { $0.stack == stack && $0.condition == condition && $0.failure == nil }
    }

    static func values<T>(_ runs: [NetworkRun], _ direction: Direction, _ value: KeyPath<DirectionFigures, T>) -> [Double] {
        runs.compactMap { $0[keyPath: direction.figures].flatMap { $0[keyPath: value] as? Double } }
    }

    static func median(_ values: [Double]) -> Double? {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return nil }
        return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    }

    /// `median (min–max)`, or the one value, or `—` when nothing was measured.
    static func cell(_ values: [Double], digits: Int = 2) -> String {
        guard let middle = median(values), let low = values.min(), let high = values.max() else { return "—" }
        let text = format(middle, digits: digits)
        return values.count == 1 ? text : "\(text) (\(format(low, digits: digits))–\(format(high, digits: digits)))"
    }

    /// Median ÷ median; a zero denominator gives `—` (or `1` when both are zero).
    static func ratio(_ ours: [Double], _ theirs: [Double]) -> String {
        guard let top = median(ours), let bottom = median(theirs) else { return "—" }
        if bottom == 0 { return top == 0 ? "1 (both 0)" : "— (Chromium 0)" }
        return format(top / bottom)
    }

    static func format(_ value: Double?, digits: Int = 2) -> String {
        guard let value else { return "—" }
        return String(format: "%.\(digits)f", value)
    }
}
