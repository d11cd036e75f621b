import Foundation

/// A hand-written SVG bar chart of encode latency: one panel per source mode, bars grouped by
/// resolution, one bar per codec and bitrate at the p50 with a whisker up to the p95.
package enum EncodeChart {
    static let colors = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b"]

    package static func render(_ section: EncodeSection, title: String) -> String {
        let figures = section.figures.filter { $0.latency != nil }
        let sources = ordered(figures.map(\.source))
        let sizes = ordered(figures.map { "\($0.width)×\($0.height)" })
        let codecs = ordered(figures.map { "\($0.codec) \($0.encoder)" })
        let bitratesBySize = Dictionary(grouping: figures) { "\($0.width)×\($0.height)" }
            .mapValues { Array(Set($0.map(\.kbps))).sorted() }
        let maxBitrates = bitratesBySize.values.map(\.count).max() ?? 1

        let barWidth = 16.0, barGap = 2.0, minimumWidth = 760.0
        let barsPerGroup = Double(codecs.count * maxBitrates)
        let groupWidth = barsPerGroup * (barWidth + barGap)
        let left = 64.0, right = 24.0, top = 78.0, panelHeight = 240.0, panelGap = 64.0
        let legendHeight = 20.0 * Double((codecs.count + 1) / 2) + 12
        // Groups spread over the plot, at least 40 px apart.
        let groupGap = max(40, (minimumWidth - left - right) / Double(max(sizes.count, 1)) - groupWidth)
        let width = left + Double(sizes.count) * (groupWidth + groupGap) + right
        let height = top + Double(sources.count) * (panelHeight + panelGap) + legendHeight
        let yMax = niceCeiling(figures.compactMap { $0.latency?.p95 }.max() ?? 1)

        var svg: [String] = [##"<svg xmlns="http://www.w3.org/2000/svg" width="\##(int(width))" height="\##(int(height))" viewBox="0 0 \##(int(width)) \##(int(height))" font-family="sans-serif" font-size="11">"##,
                   ##"<rect width="100%" height="100%" fill="white"/>"##,
                   ##"<text x="\##(int(left))" y="22" font-size="15" font-weight="bold">Encode latency per frame (ms): p50 bar, p95 whisker</text>"##,
                   ##"<text x="\##(int(left))" y="40" fill="#555">\##(escape(title))</text>"##,
                   ##"<text x="\##(int(left))" y="56" fill="#555">encoder sink pad → src pad, pad probes; per size: solid = lower bitrate, pale = higher</text>"##]
        for (panelIndex, source) in sources.enumerated() {
            let panelTop = top + Double(panelIndex) * (panelHeight + panelGap) + 12
            let baseline = panelTop + panelHeight
            func y(_ value: Double) -> Double { baseline - value / yMax * panelHeight }
            svg.append(##"<text x="\##(int(left))" y="\##(int(panelTop - 4))" font-weight="bold">\##(escape(source)) source</text>"##)
            for tick in ticks(yMax) {
                svg.append(##"<line x1="\##(int(left))" x2="\##(int(width - right))" y1="\##(fmt(y(tick)))" y2="\##(fmt(y(tick)))" stroke="#e5e5e5"/>"##)
                svg.append(##"<text x="\##(int(left - 6))" y="\##(fmt(y(tick) + 4))" text-anchor="end">\##(label(tick))</text>"##)
            }
            svg.append(##"<line x1="\##(int(left))" x2="\##(int(left))" y1="\##(int(panelTop))" y2="\##(fmt(baseline))" stroke="#333"/>"##)
            svg.append(##"<line x1="\##(int(left))" x2="\##(int(width - right))" y1="\##(fmt(baseline))" y2="\##(fmt(baseline))" stroke="#333"/>"##)
            svg.append(##"<text transform="translate(16 \##(int(panelTop + panelHeight / 2))) rotate(-90)" text-anchor="middle">ms</text>"##)
            for (sizeIndex, size) in sizes.enumerated() {
                let groupLeft = left + groupGap / 2 + Double(sizeIndex) * (groupWidth + groupGap)
                svg.append(##"<text x="\##(fmt(groupLeft + groupWidth / 2))" y="\##(fmt(baseline + 16))" text-anchor="middle">\##(size)</text>"##)
                let bitrates = bitratesBySize[size] ?? []
                for (codecIndex, codec) in codecs.enumerated() {
                    for (rateIndex, kbps) in bitrates.enumerated() {
                        guard let figure = figures.first(where: { $0.source == source && "\($0.width)×\($0.height)" == size
                                                                    && "\($0.codec) \($0.encoder)" == codec && $0.kbps == kbps }),
                              let latency = figure.latency else { continue }
                        let x = groupLeft + Double(codecIndex * maxBitrates + rateIndex) * (barWidth + barGap)
                        let color = colors[codecIndex % colors.count]
                        let opacity = rateIndex == 0 ? "1" : "0.45"
                        let tooltip = "\(codec) \(size) \(kbps) kbit/s \(source): p50 \(label(latency.p50)) ms, p95 \(label(latency.p95)) ms, \(latency.count) frames"
                        svg.append(##"<rect x="\##(fmt(x))" y="\##(fmt(y(latency.p50)))" width="\##(fmt(barWidth))" height="\##(fmt(baseline - y(latency.p50)))" fill="\##(color)" fill-opacity="\##(opacity)"><title>\##(escape(tooltip))</title></rect>"##)
                        let center = x + barWidth / 2
                        svg.append(##"<line x1="\##(fmt(center))" x2="\##(fmt(center))" y1="\##(fmt(y(latency.p50)))" y2="\##(fmt(y(latency.p95)))" stroke="#222"/>"##)
                        svg.append(##"<line x1="\##(fmt(center - 4))" x2="\##(fmt(center + 4))" y1="\##(fmt(y(latency.p95)))" y2="\##(fmt(y(latency.p95)))" stroke="#222"/>"##)
                    }
                }
            }
        }
        let legendTop = top + Double(sources.count) * (panelHeight + panelGap)
        for (index, codec) in codecs.enumerated() {
            let x = left + Double(index % 2) * 260, y = legendTop + Double(index / 2) * 20
            svg.append(##"<rect x="\##(fmt(x))" y="\##(fmt(y - 10))" width="12" height="12" fill="\##(colors[index % colors.count])"/>"##)
            svg.append(##"<text x="\##(fmt(x + 18))" y="\##(fmt(y))">\##(escape(codec))</text>"##)
        }
        svg.append("</svg>")
        return svg.joined(separator: "\n") + "\n"
    }

    /// First occurrences, in order.
    static func ordered(_ values: [String]) -> [String] {
        var seen = Set<String>()
        return values.filter { seen.insert($0).inserted }
    }

    /// 1, 2 or 5 times a power of ten, at least `value`.
    static func niceCeiling(_ value: Double) -> Double {
        guard value > 0 else { return 1 }
        let magnitude = pow(10, floor(log10(value)))
        return [1.0, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10].map { $0 * magnitude }.first { $0 >= value } ?? 10 * magnitude
    }

    static func ticks(_ maximum: Double) -> [Double] {
        let magnitude = pow(10, floor(log10(maximum / 5)))
        let step = [1.0, 2, 2.5, 5, 10].map { $0 * magnitude }.first { $0 >= maximum / 6 } ?? 10 * magnitude
        return stride(from: 0, through: maximum + step / 1000, by: step).map { $0 }
    }

    static func label(_ value: Double) -> String {
        value >= 10 || value == value.rounded() ? String(format: "%.0f", value) : String(format: "%.1f", value)
    }

    static func fmt(_ value: Double) -> String { String(format: "%.1f", value) }
    static func int(_ value: Double) -> String { String(Int(value.rounded())) }

    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}
