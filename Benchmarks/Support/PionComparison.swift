import Foundation

/// One row of the ECVKit ÷ Pion table: the same mode, call count and layout measured with each
/// stack's peers (alternated runs), medians of the runs that measured something.
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
            if figure.stack == "Pion" { rows[index!].pion.append(run) } else { rows[index!].ecvkit.append(run) }
        }
        let paired = rows.filter { !$0.pion.isEmpty && !$0.ecvkit.isEmpty }
        return paired.isEmpty ? nil : paired
    }
}

extension MarkdownReport {
    static func pionComparisonTable(_ rows: [PionComparison]) -> [String] {
        func median(_ values: [Double]) -> Double {
            let sorted = values.sorted()
            return sorted.isEmpty ? 0 : sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
        }
        func spread(_ values: [Double], _ digits: Int) -> String {
            guard let low = values.min(), let high = values.max() else { return "–" }
            return values.count == 1 ? number(low, digits) : "\(number(median(values), digits)) (\(number(low, digits))–\(number(high, digits)))"
        }
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
}
