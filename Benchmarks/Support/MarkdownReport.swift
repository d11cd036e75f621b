import Foundation

/// Renders a `BenchmarkReport` as Markdown: the machine, then one table per section, each with
/// what was measured and the load while it ran.
package enum MarkdownReport {
    package static func render(_ report: BenchmarkReport) -> String {
        var lines = ["# ECVKit benchmarks, \(report.machine.date)", ""]
        if report.smoke {
            lines += ["> **Smoke run**: tiny frame counts to check that the benchmarks work. The figures mean nothing.", ""]
        }
        let machine = report.machine
        lines += ["| machine | |", "| --- | --- |",
                  "| CPU | \(machine.cpuModel) |", "| cores | \(machine.cores) |", "| memory | \(number(machine.memoryGiB, 1)) GiB |",
                  "| kernel | \(machine.kernel) |", "| GStreamer | \(machine.gstreamer) |", "| Swift | \(machine.swift) |",
                  "| load average at start (1/5/15 min) | \(machine.loadAverage.map { number($0, 2) }.joined(separator: " / ")) |", ""]
        if let encode = report.encode { lines += encodeTable(encode) }
        if let overhead = report.overhead { lines += overheadTable(overhead) }
        if let instructions = report.instructions { lines += instructionsTable(instructions) }
        if let peer = report.peer { lines += peerTable(peer) }
        if let g2g = report.glassToGlass { lines += glassToGlassTable(g2g) }
        if let setup = report.callSetup { lines += callSetupTable(setup) }
        if let cost = report.callCost { lines += callCostTable(cost) }
        if let lipSync = report.lipSync { lines += lipSyncTable(lipSync) }
        if let pending = report.pending, !pending.isEmpty {
            lines += ["## Not yet measured", ""]
            for (name, note) in pending.sorted(by: { $0.key < $1.key }) { lines.append("- **\(name)**: \(note)") }
            lines.append("")
        }
        return lines.joined(separator: "\n")
    }

    static func encodeTable(_ section: EncodeSection) -> [String] {
        var lines = ["## Encode latency", "", section.method, "",
                     "| codec | encoder | size | kbit/s | source | frames | p50 ms | p95 ms | p99 ms | max ms | mean ms | tracer p50 ms | fps | CPU ms/frame |",
                     "| --- | --- | --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
        for figure in section.figures {
            let latency = figure.latency
            lines.append("| \(figure.codec) | \(figure.encoder) | \(figure.width)×\(figure.height) | \(figure.kbps) | \(figure.source) | "
                + "\(figure.framesEncoded)/\(figure.framesOffered) | \(ms(latency?.p50)) | \(ms(latency?.p95)) | \(ms(latency?.p99)) | "
                + "\(ms(latency?.max)) | \(ms(latency?.mean)) | \(ms(figure.tracer?.p50)) | "
                + "\(figure.sustainedFps.map { number($0, 0) } ?? "–") | \(number(figure.cpuMsPerFrame, 2)) |")
        }
        return lines + ["", load(section.load), ""]
    }

    static func overheadTable(_ section: OverheadSection) -> [String] {
        var lines = ["## Framework overhead (ECVKit vs gst-launch-1.0, same graph)", "", section.method, "",
                     "| codec | encoder | size | kbit/s | frames × runs | ours p50 ms | gst-launch p50 ms | latency ratio | ours CPU ms/frame | gst-launch CPU ms/frame | CPU ratio |",
                     "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
        for figure in section.figures {
            lines.append("| \(figure.codec) | \(figure.encoder) | \(figure.width)×\(figure.height) | \(figure.kbps) | "
                + "\(figure.frames) × \(figure.ours.count) | \(spread(figure.ours.compactMap { $0.encoderLatency?.p50 })) | "
                + "\(spread(figure.gstLaunch.compactMap { $0.encoderLatency?.p50 })) | \(ratio(figure.latencyRatio)) | "
                + "\(spread(figure.ours.map(\.cpuMsPerFrame))) | \(spread(figure.gstLaunch.map(\.cpuMsPerFrame))) | \(ratio(figure.cpuRatio)) |")
        }
        lines += ["", "Values are the median of the runs with their range in brackets; a ratio is ours ÷ gst-launch per pair of runs "
                  + "(target ≤ 1.02).", ""]
        lines += section.figures.map { "- \($0.encoder): `gst-launch-1.0 \($0.launchLine)`" }
        return lines + ["", load(section.load), ""]
    }

    static func peerTable(_ section: PeerSection) -> [String] {
        var lines = ["## Side by side with aiortc (same raw frames)", "", section.method, "",
                     "| codec | implementation | frames | p50 ms | p95 ms | p99 ms | max ms | CPU ms/frame |",
                     "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
        for figure in section.ours + section.aiortc {
            let perFrame = figure.perFrame
            lines.append("| \(figure.codec) | \(figure.implementation) | \(perFrame?.count ?? 0) | \(ms(perFrame?.p50)) | \(ms(perFrame?.p95)) | "
                + "\(ms(perFrame?.p99)) | \(ms(perFrame?.max)) | \(number(figure.cpuMsPerFrame, 2)) |")
        }
        lines.append("")
        if section.aiortc.isEmpty {
            lines.append("aiortc was not run (it runs from `Benchmarks/run.sh`, not in `--smoke`).")
        } else {
            lines += ["| codec | ours ÷ aiortc, time per frame (p50) | ours ÷ aiortc, CPU per frame | ours encoder alone p50 ms | ours appsrc → encoder p50 ms |",
                      "| --- | ---: | ---: | ---: | ---: |"]
            for mine in section.ours {
                guard let theirs = section.aiortc.first(where: { $0.codec == mine.codec }) else { continue }
                let latency = zip2(mine.perFrame?.p50, theirs.perFrame?.p50).map { number($0 / $1, 2) } ?? "–"
                let cpu = theirs.cpuMsPerFrame > 0 ? number(mine.cpuMsPerFrame / theirs.cpuMsPerFrame, 2) : "–"
                lines.append("| \(mine.codec) | \(latency) | \(cpu) | \(ms(mine.encoderOnly?.p50)) | \(ms(mine.sourceToEncoder?.p50)) |")
            }
            if let version = section.aiortcVersion { lines += ["", "aiortc: \(version)."] }
        }
        return lines + ["", load(section.load), ""]
    }

    static func glassToGlassTable(_ section: GlassToGlassSection) -> [String] {
        var lines = ["## Glass-to-glass latency (caller → agent, two PeerConnections on loopback)", "", section.method, "",
                     "| codec | size | kbit/s | jitter buffer ms | frames read/sent | unreadable | p50 ms | p95 ms | p99 ms | max ms | first readable frame s |",
                     "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
        for figure in section.figures {
            let latency = figure.latency
            lines.append("| \(figure.codec) | \(figure.width)×\(figure.height) | \(figure.kbps) | \(figure.jitterBufferMs) | "
                + "\(figure.framesReceived)/\(figure.framesSent) | \(figure.framesUnreadable) | \(ms(latency?.p50)) | \(ms(latency?.p95)) | "
                + "\(ms(latency?.p99)) | \(ms(latency?.max)) | \(figure.firstFrameSeconds.map { number($0, 2) } ?? "–") |")
        }
        return lines + ["", load(section.load), ""]
    }

    // MARK: Formatting

    static func number(_ value: Double, _ decimals: Int) -> String { String(format: "%.\(decimals)f", value) }
    static func ms(_ value: Double?) -> String { value.map { number($0, 2) } ?? "–" }

    static func spread(_ values: [Double]) -> String {
        guard let spread = Spread(values) else { return "–" }
        return values.count == 1 ? number(spread.median, 2) : "\(number(spread.median, 2)) (\(number(spread.min, 2))–\(number(spread.max, 2)))"
    }

    static func ratio(_ spread: Spread?) -> String {
        guard let spread else { return "–" }
        return spread.values.count == 1 ? number(spread.median, 3) : "\(number(spread.median, 3)) (\(number(spread.min, 3))–\(number(spread.max, 3)))"
    }

    static func load(_ window: LoadWindow?) -> String {
        guard let window else { return "" }
        return "Load average (1 min) \(number(window.start, 2)) at the start, \(number(window.end, 2)) at the end; section took \(number(window.wallSeconds, 0)) s."
    }

    private static func zip2(_ a: Double?, _ b: Double?) -> (Double, Double)? {
        guard let a, let b, b > 0 else { return nil }
        return (a, b)
    }
}
