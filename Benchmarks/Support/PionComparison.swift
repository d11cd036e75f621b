import Foundation

/// One row of the ECVKit ÷ Pion table: the same mode, call count and layout measured with each
/// stack's peers (alternated runs), medians of the runs that measured something; with bare webrtcbin
/// bots' runs too when they were made (`--stacks ecvkit,webrtcbin,pion`), ECVKit ÷ webrtcbin beside it.
package struct PionComparison: Codable, Sendable {
    /// Per call: CPU % of one core, RSS MiB, threads, descriptors; the run's load average.
    package struct Run: Codable, Sendable {
        package var cpu: Double
        package var rssMiB: Double
        package var threads: Double
        package var fds: Double
        package var flowing: Int
        package var loadAverage: Double?
    }

    package var mode: String
    package var calls: Int
    package var processes: Int
    package var ecvkit: [Run]
    package var pion: [Run]
    /// Bare webrtcbin bots (`webrtcbin-agents`); nil in results from before that stack.
    package var webrtcbin: [Run]?

    /// Pairs each ECVKit tier with the Pion runs of the same mode, calls and layout.
    package static func rows(_ figures: [CallCostFigure]) -> [PionComparison]? {
        var rows: [PionComparison] = []
        for figure in figures where figure.failure == nil {
            let (cpu, rss, threads) = figure.subjectPerCall
            let run = Run(cpu: cpu, rssMiB: rss, threads: threads, fds: figure.subjectFdsPerCall, flowing: figure.callsFlowing,
                          loadAverage: figure.loadAverage)
            let processes = figure.botProcesses ?? 1
            var index = rows.firstIndex { $0.mode == figure.mode && $0.calls == figure.calls && $0.processes == processes }
            if index == nil {
                rows.append(PionComparison(mode: figure.mode, calls: figure.calls, processes: processes, ecvkit: [], pion: []))
                index = rows.count - 1
            }
            switch figure.stack {
            case "Pion": rows[index!].pion.append(run)
            case "webrtcbin": rows[index!].webrtcbin = (rows[index!].webrtcbin ?? []) + [run]
            default: rows[index!].ecvkit.append(run)
            }
        }
        let paired = rows.filter { !$0.ecvkit.isEmpty && (!$0.pion.isEmpty || !($0.webrtcbin ?? []).isEmpty) }
        return paired.isEmpty ? nil : paired
    }
}

extension MarkdownReport {
    /// The median of a comparison's runs (0 for none).
    private static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        return sorted.isEmpty ? 0 : sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    }

    /// One run's figure, or the runs' median with their range.
    private static func spread(_ values: [Double], _ digits: Int) -> String {
        guard let low = values.min(), let high = values.max() else { return "–" }
        return values.count == 1 ? number(low, digits) : "\(number(median(values), digits)) (\(number(low, digits))–\(number(high, digits)))"
    }

    static func pionComparisonTable(_ rows: [PionComparison]) -> [String] {
        if rows.contains(where: { !($0.webrtcbin ?? []).isEmpty }) { return threeStackTable(rows) }
        func ratio(_ ecvkit: [Double], _ pion: [Double]) -> String {
            let divisor = median(pion)
            return divisor > 0 ? number(median(ecvkit) / divisor, 2) : "–"
        }
        var lines = ["### ECVKit ÷ Pion per call", "",
                     "The same tier with each stack's peers, runs alternated; median (range) of the runs. Receive and record: "
                        + "the bots (ECVKit `cost-agents` or Pion's `Benchmarks/pion`), the callers ECVKit's load generator in both. "
                        + "Send: the callers (ECVKit's load generator or Pion's), the bots ECVKit's receive-only bots in both.", "",
                     "| mode | calls | processes | runs | CPU %/call ECVKit | CPU %/call Pion | ratio | RSS MiB/call ECVKit | RSS MiB/call Pion | ratio "
                        + "| threads/call ECVKit / Pion | fds/call ECVKit / Pion | flowing ECVKit / Pion | load average |",
                     "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
        for row in rows {
            let loads = (row.ecvkit + row.pion).compactMap(\.loadAverage)
            lines.append("| \(row.mode) | \(row.calls) | \(row.processes) | \(row.ecvkit.count)+\(row.pion.count) | "
                + "\(spread(row.ecvkit.map(\.cpu), 2)) | \(spread(row.pion.map(\.cpu), 2)) | \(ratio(row.ecvkit.map(\.cpu), row.pion.map(\.cpu))) | "
                + "\(spread(row.ecvkit.map(\.rssMiB), 2)) | \(spread(row.pion.map(\.rssMiB), 2)) | \(ratio(row.ecvkit.map(\.rssMiB), row.pion.map(\.rssMiB))) | "
                + "\(number(median(row.ecvkit.map(\.threads)), 1)) / \(number(median(row.pion.map(\.threads)), 1)) | "
                + "\(number(median(row.ecvkit.map(\.fds)), 1)) / \(number(median(row.pion.map(\.fds)), 1)) | "
                + "\(row.ecvkit.map { String($0.flowing) }.joined(separator: ",")) / \(row.pion.map { String($0.flowing) }.joined(separator: ",")) | "
                + "\(loads.isEmpty ? "–" : "\(number(loads.min() ?? 0, 1))–\(number(loads.max() ?? 0, 1))") |")
        }
        return lines + [""]
    }

    /// The table with bare webrtcbin bots beside ECVKit and Pion: ECVKit ÷ webrtcbin is what ECVKit adds
    /// above webrtcbin 1.22's own cost, ECVKit ÷ Pion the distance to Pion.
    static func threeStackTable(_ rows: [PionComparison]) -> [String] {
        func ratio(_ ecvkit: [Double], _ other: [Double]) -> String {
            let divisor = median(other)
            return divisor > 0 && !ecvkit.isEmpty ? number(median(ecvkit) / divisor, 2) : "–"
        }
        func medians(_ runs: [[PionComparison.Run]], _ value: (PionComparison.Run) -> Double) -> String {
            runs.map { $0.isEmpty ? "–" : number(median($0.map(value)), 1) }.joined(separator: " / ")
        }
        var lines = ["### ECVKit ÷ webrtcbin and ÷ Pion per call", "",
                     "The same tier with each stack's bots, runs alternated; median (range) of the runs; the callers are ECVKit's load "
                        + "generator in every run. webrtcbin: bare webrtcbin 1.22 bots (`webrtcbin-agents`, the binding alone), the floor "
                        + "under ECVKit's; ECVKit ÷ webrtcbin is what ECVKit adds above it.", "",
                     "| mode | calls | runs E+W+P | CPU %/call ECVKit | webrtcbin | Pion | ECVKit ÷ webrtcbin | ECVKit ÷ Pion "
                        + "| RSS MiB/call ECVKit | webrtcbin | Pion | ECVKit ÷ webrtcbin | ECVKit ÷ Pion "
                        + "| threads/call E / W / P | fds/call E / W / P | flowing E / W / P | load average |",
                     "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
        for row in rows {
            let webrtcbin: [PionComparison.Run] = row.webrtcbin ?? []
            let stacks: [[PionComparison.Run]] = [row.ecvkit, webrtcbin, row.pion]
            let loads: [Double] = stacks.joined().compactMap(\.loadAverage)
            let cpu: String = stacks.map { spread($0.map(\.cpu), 2) }.joined(separator: " | ")
            let cpuRatios: String = ratio(row.ecvkit.map(\.cpu), webrtcbin.map(\.cpu)) + " | " + ratio(row.ecvkit.map(\.cpu), row.pion.map(\.cpu))
            let rss: String = stacks.map { spread($0.map(\.rssMiB), 2) }.joined(separator: " | ")
            let rssRatios: String = ratio(row.ecvkit.map(\.rssMiB), webrtcbin.map(\.rssMiB)) + " | " + ratio(row.ecvkit.map(\.rssMiB), row.pion.map(\.rssMiB))
            let flowing: String = stacks.map { $0.map { String($0.flowing) }.joined(separator: ",") }.joined(separator: " / ")
            let load: String = loads.isEmpty ? "–" : number(loads.min() ?? 0, 1) + "–" + number(loads.max() ?? 0, 1)
            let runs: String = "\(row.ecvkit.count)+\(webrtcbin.count)+\(row.pion.count)"
            let cells: [String] = [row.mode, String(row.calls), runs, cpu, cpuRatios, rss, rssRatios, medians(stacks, \.threads), medians(stacks, \.fds), flowing, load]
            lines.append("| " + cells.joined(separator: " | ") + " |")
        }
        return lines + [""]
    }
}
