import Foundation
import MediaPipeline
import MediaRuntime

/// A recording's timeline as one SVG picture: a lane per track (its span, its gaps and mutes),
/// chapter bands across the lanes (hold, mute, photo, transfer, …), and the stats sidecar's
/// bitrate and packet-loss curves per direction under them, on one axis labelled in seconds.
/// The PNG is the same SVG rasterised (`SVGRasterizer`), so both always show the same thing.
public struct TimelinePicture: Sendable {
    public static let width = 1000
    static let plotLeft = 160.0
    static let plotRight = Double(width) - 24
    static let laneHeight = 22.0
    static let laneSpacing = 8.0
    static let chapterRowHeight = 15.0
    static let maxChapterRows = 4
    static let chartHeight = 80.0
    static let lossHeight = 44.0

    public let svg: String
    public let height: Int

    public init(_ inspection: RecordingInspection) {
        var drawing = TimelineDrawing(inspection)
        svg = drawing.render()
        height = drawing.height
    }
}

/// The drawing behind `TimelinePicture`: geometry first, then SVG text.
private struct TimelineDrawing {
    let report: RecordingReport
    let lanes: [(track: RecordingReport.TrackReport, texts: [Double])]
    let stats: [StatsLine]
    let span: Double
    var out: [String] = []
    private(set) var height = 0

    init(_ inspection: RecordingInspection) {
        report = inspection.report
        lanes = zip(inspection.report.tracks, inspection.info.tracks).map { ($0, $1.texts.filter { !$0.text.isEmpty }.map(\.time)) }
        stats = inspection.statsLines
        let ends = [report.duration] + report.chapters.map { $0.end ?? $0.start } + stats.map(\.time)
        span = max(1, ends.max() ?? 1)
    }

    func x(_ time: Double) -> Double {
        TimelinePicture.plotLeft + (TimelinePicture.plotRight - TimelinePicture.plotLeft) * min(max(time, 0), span) / span
    }

    mutating func render() -> String {
        let labelRows = chapterLabelRows()
        let rows = Double(min(TimelinePicture.maxChapterRows, (labelRows.map(\.row).max() ?? -1) + 1))
        let verdictLines = report.verdict.details.prefix(4)
        let chaptersTop = 48 + Double(verdictLines.count) * 16
        let lanesTop = chaptersTop + rows * TimelinePicture.chapterRowHeight + 4
        let lanesBottom = lanesTop + Double(lanes.count) * (TimelinePicture.laneHeight + TimelinePicture.laneSpacing)
        let chartTop = lanesBottom + 34
        let lossTop = chartTop + TimelinePicture.chartHeight + 22
        let legendTop = lossTop + TimelinePicture.lossHeight + 26
        height = Int(legendTop + 22)

        out.append(##"<rect width="\##(TimelinePicture.width)" height="\##(height)" fill="#ffffff"/>"##)
        text(12, 22, "\(URL(fileURLWithPath: report.file).lastPathComponent) — " + String(format: "%.1f s", report.duration), size: 15, weight: "bold")
        for (index, line) in verdictLines.enumerated() {
            text(12, 42 + Double(index) * 16, (index == 0 ? "verdict: " : "         ") + line, size: 12,
                 color: report.verdict.findings == [.complete] ? "#1e7b34" : "#b00020")
        }
        for (index, lane) in lanes.enumerated() {
            drawLane(lane.track, texts: lane.texts, top: lanesTop + Double(index) * (TimelinePicture.laneHeight + TimelinePicture.laneSpacing))
        }
        // Over the lanes, translucent: a period shows on every track it spans.
        drawChapters(labelRows, top: chaptersTop, lanesTop: lanesTop, lanesBottom: lanesBottom)
        drawAxis(top: lanesBottom, bottom: lossTop + TimelinePicture.lossHeight)
        drawBitrate(top: chartTop)
        drawLoss(top: lossTop)
        drawLegend(top: legendTop)
        return ##"<?xml version="1.0" encoding="UTF-8"?>"## + "\n"
            + ##"<svg xmlns="http://www.w3.org/2000/svg" width="\##(TimelinePicture.width)" height="\##(height)" "##
            + ##"viewBox="0 0 \##(TimelinePicture.width) \##(height)" font-family="DejaVu Sans, sans-serif">"## + "\n"
            + out.joined(separator: "\n") + "\n</svg>\n"
    }

    // MARK: Parts

    static func color(ofChapter label: String) -> String {
        let label = label.lowercased()
        if label.contains("hold") { return "#f5a623" }
        if label.contains("mute") { return "#8e44ad" }
        if label.contains("photo") { return "#27ae60" }
        if label.contains("transfer") { return "#e84393" }
        if label.contains("flash") { return "#e6b800" }
        return "#7f8c8d"
    }

    /// Each chapter's label row (the first where it overlaps no other label) and whether it
    /// ends at its time instead of starting there (near the right edge).
    func chapterLabelRows() -> [(chapter: RecordingChapter, row: Int, endsAtTime: Bool)] {
        var rowEnds: [Double] = []
        return report.chapters.prefix(500).map { chapter in
            let at = x(chapter.start), width = Double(chapter.label.count) * 6.4 + 10
            let endsAtTime = at + width > Double(TimelinePicture.width)
            let (left, right) = endsAtTime ? (at - width, at) : (at, at + width)
            let row = rowEnds.firstIndex { $0 < left } ?? rowEnds.count
            if row < rowEnds.count { rowEnds[row] = right } else { rowEnds.append(right) }
            return (chapter, row, endsAtTime)
        }
    }

    mutating func drawChapters(_ rows: [(chapter: RecordingChapter, row: Int, endsAtTime: Bool)], top: Double, lanesTop: Double,
                               lanesBottom: Double) {
        out.append(##"<g class="chapters">"##)
        for (chapter, row, endsAtTime) in rows {
            let color = Self.color(ofChapter: chapter.label)
            let start = x(chapter.start)
            if chapter.kind == .period {
                let end = x(chapter.end ?? span)
                out.append(##"<rect class="chapter" x="\##(f(start))" y="\##(f(lanesTop - 4))" width="\##(f(max(1, end - start)))" "##
                           + ##"height="\##(f(lanesBottom - lanesTop + 4))" fill="\##(color)" fill-opacity="0.22"/>"##)
            } else {
                out.append(##"<line class="chapter" x1="\##(f(start))" y1="\##(f(lanesTop - 4))" x2="\##(f(start))" y2="\##(f(lanesBottom))" "##
                           + ##"stroke="\##(color)" stroke-width="2" stroke-dasharray="4 3"/>"##)
            }
            guard row < TimelinePicture.maxChapterRows else { continue }
            let y = top + Double(row) * TimelinePicture.chapterRowHeight + 11
            out.append(##"<line x1="\##(f(start))" y1="\##(f(y - 10))" x2="\##(f(start))" y2="\##(f(lanesTop - 4))" stroke="\##(color)" stroke-width="1"/>"##)
            text(endsAtTime ? start - 3 : start + 3, y, chapter.label, size: 11, color: color == "#e6b800" ? "#8a6d00" : color,
                 anchor: endsAtTime ? "end" : "start")
        }
        out.append("</g>")
    }

    mutating func drawLane(_ track: RecordingReport.TrackReport, texts: [Double], top: Double) {
        out.append(##"<g class="lane" data-track="\##(xmlEscaped(track.name))">"##)
        text(12, top + 15, track.name, size: 12, weight: "bold")
        text(12 + Double(track.name.count) * 7.6 + 6, top + 15, track.codec, size: 10, color: "#666666")
        out.append(##"<rect x="\##(f(x(0)))" y="\##(f(top))" width="\##(f(x(span) - x(0)))" height="\##(f(TimelinePicture.laneHeight))" fill="#eeeeee"/>"##)
        if track.kind == "text" {
            for time in texts {
                out.append(##"<rect x="\##(f(x(time) - 1))" y="\##(f(top + 3))" width="2" height="\##(f(TimelinePicture.laneHeight - 6))" fill="#555555"/>"##)
            }
        } else if let first = track.firstTime, let last = track.lastTime {
            let fill = track.kind == "video" ? "#4a90d9" : "#50b36b"
            out.append(##"<rect class="media" x="\##(f(x(first)))" y="\##(f(top + 3))" width="\##(f(max(1, x(last) - x(first))))" "##
                       + ##"height="\##(f(TimelinePicture.laneHeight - 6))" fill="\##(fill)"/>"##)
        } else {
            text(x(0) + 6, top + 15, "no data", size: 11, color: "#b00020")
        }
        for gap in report.gaps where gap.track == track.name {
            let fill = gap.reason == .muted ? "#222222" : "#d0021b"
            out.append(##"<rect class="gap" x="\##(f(x(gap.start)))" y="\##(f(top))" width="\##(f(max(2, x(gap.end) - x(gap.start))))" "##
                       + ##"height="\##(f(TimelinePicture.laneHeight))" fill="\##(fill)" fill-opacity="\##(gap.reason == .muted ? "0.6" : "0.9")"/>"##)
        }
        out.append("</g>")
    }

    mutating func drawAxis(top: Double, bottom: Double) {
        out.append(##"<g class="axis">"##)
        out.append(##"<line x1="\##(f(x(0)))" y1="\##(f(top + 2))" x2="\##(f(x(span)))" y2="\##(f(top + 2))" stroke="#333333" stroke-width="1"/>"##)
        let step = [0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200].first { span / $0 <= 12 } ?? span
        var tick = 0.0
        while tick <= span + 1e-9 {
            let at = x(tick)
            out.append(##"<line x1="\##(f(at))" y1="\##(f(top + 2))" x2="\##(f(at))" y2="\##(f(bottom))" stroke="#cccccc" stroke-width="1" stroke-dasharray="2 3"/>"##)
            text(at - 8, top + 16, String(format: "%g s", tick), size: 10, color: "#333333")
            tick += step
        }
        out.append("</g>")
    }

    static let directionColors: [DirectionStats.Direction: String] = [.sent: "#1f5fa8", .received: "#e67e22"]

    mutating func drawBitrate(top: Double) {
        out.append(##"<g class="bitrate">"##)
        text(12, top + 14, "bitrate", size: 12, weight: "bold")
        let height = TimelinePicture.chartHeight
        out.append(##"<rect x="\##(f(x(0)))" y="\##(f(top))" width="\##(f(x(span) - x(0)))" height="\##(f(height))" fill="#f7f7f7" stroke="#dddddd"/>"##)
        let peak = stats.compactMap(\.bitrate).max() ?? 0
        if stats.isEmpty {
            text(x(0) + 8, top + height / 2 + 4, "no stats samples", size: 11, color: "#666666")
        } else {
            let top = top
            let scale = Self.niceCeiling(max(peak / 1000, 1))
            text(12, top + 30, "0–\(Int(scale)) kb/s", size: 10, color: "#666666")
            for direction in [DirectionStats.Direction.sent, .received] {
                let points = stats.filter { $0.direction == direction }.compactMap { line in
                    line.bitrate.map { "\(f(x(line.time))),\(f(top + height - height * min($0 / 1000, scale) / scale))" }
                }
                guard !points.isEmpty else { continue }
                out.append(##"<polyline class="\##(direction.rawValue)" points="\##(points.joined(separator: " "))" fill="none" "##
                           + ##"stroke="\##(Self.directionColors[direction]!)" stroke-width="2"/>"##)
            }
        }
        out.append("</g>")
    }

    mutating func drawLoss(top: Double) {
        out.append(##"<g class="loss">"##)
        text(12, top + 14, "packets lost", size: 12, weight: "bold")
        let height = TimelinePicture.lossHeight
        out.append(##"<rect x="\##(f(x(0)))" y="\##(f(top))" width="\##(f(x(span) - x(0)))" height="\##(f(height))" fill="#f7f7f7" stroke="#dddddd"/>"##)
        var bars: [(time: Double, lost: Int, direction: DirectionStats.Direction)] = []
        for direction in [DirectionStats.Direction.sent, .received] {
            var previous: Int?
            for line in stats where line.direction == direction {
                guard let lost = line.packetsLost else { continue }
                if let previous, lost > previous { bars.append((line.time, lost - previous, direction)) }
                previous = lost
            }
        }
        let peak = bars.map(\.lost).max() ?? 0
        text(12, top + 30, peak == 0 ? "none" : "0–\(peak) per sample", size: 10, color: "#666666")
        for bar in bars {
            let barHeight = max(2, height * Double(bar.lost) / Double(max(peak, 1)))
            let offset = bar.direction == .sent ? -2.0 : 1.0
            out.append(##"<rect class="\##(bar.direction.rawValue)" x="\##(f(x(bar.time) + offset))" y="\##(f(top + height - barHeight))" "##
                       + ##"width="2" height="\##(f(barHeight))" fill="\##(Self.directionColors[bar.direction]!)"/>"##)
        }
        out.append("</g>")
    }

    mutating func drawLegend(top: Double) {
        let items: [(String, String)] = [("video", "#4a90d9"), ("audio", "#50b36b"), ("no frames", "#d0021b"), ("muted", "#222222"),
                                         ("hold", "#f5a623"), ("mute", "#8e44ad"), ("photo", "#27ae60"), ("transfer", "#e84393"),
                                         ("sent", Self.directionColors[.sent]!), ("received", Self.directionColors[.received]!)]
        out.append(##"<g class="legend">"##)
        var left = 12.0
        for (label, color) in items {
            out.append(##"<rect x="\##(f(left))" y="\##(f(top))" width="12" height="12" fill="\##(color)"/>"##)
            text(left + 16, top + 10, label, size: 11, color: "#333333")
            left += 16 + Double(label.count) * 6.6 + 18
        }
        out.append("</g>")
    }

    // MARK: SVG text

    mutating func text(_ x: Double, _ y: Double, _ content: String, size: Int, weight: String = "normal", color: String = "#222222",
                       anchor: String = "start") {
        let content = content.count > 120 ? content.prefix(119) + "…" : content
        out.append(##"<text x="\##(f(x))" y="\##(f(y))" font-size="\##(size)" font-weight="\##(weight)" fill="\##(color)" "##
                   + ##"text-anchor="\##(anchor)">\##(xmlEscaped(String(content)))</text>"##)
    }

    static func niceCeiling(_ value: Double) -> Double {
        let magnitude = pow(10, floor(log10(value)))
        return ([1, 2, 5, 10].map { $0 * magnitude }.first { $0 >= value }) ?? value
    }

    func f(_ value: Double) -> String { String(format: "%.1f", value) }
}

/// Text made safe for SVG/XML content and attribute values (control characters dropped).
func xmlEscaped(_ text: String) -> String {
    var escaped = ""
    for scalar in text.unicodeScalars {
        switch scalar {
        case "&": escaped += "&amp;"
        case "<": escaped += "&lt;"
        case ">": escaped += "&gt;"
        case "\"": escaped += "&quot;"
        case "'": escaped += "&apos;"
        case _ where scalar.value < 0x20 || (0xFFFE...0xFFFF).contains(scalar.value): escaped += " "
        default: escaped.unicodeScalars.append(scalar)
        }
    }
    return escaped
}
