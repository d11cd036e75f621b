import Foundation
import GStreamer
import MediaRuntime
import Synchronization

/// A contact sheet of a recording's video: one row every `interval` seconds, one column per
/// video track (both parties side by side), each cell the first frame at or after the row's
/// time with that frame's timestamp. Only the frames shown are decoded, each from the key frame
/// before it: the file is demuxed once without decoding, and each cell's group of pictures up to
/// its frame goes through a short-lived decoder (`PictureEncoder`).
public enum ContactSheet {
    public static let cellWidth = 240
    public static let cellHeight = 180
    static let labelColumn = 72
    static let header = 58
    static let spacing = 8
    static let maxRows = 60
    /// A group of pictures larger than this is not kept (no cell from it).
    static let maxGroupBytes = 64 << 20

    public struct Layout: Sendable, Hashable {
        public var columns: [String]
        /// Row times, seconds.
        public var times: [Double]
        public var interval: Double
        /// Cells whose frames were found but did not decode (a torn group of pictures); the sheet
        /// marks them "cannot decode", apart from the cells without video.
        public var undecodedCells = 0
        public var width: Int { labelColumn + columns.count * (cellWidth + spacing) + spacing }
        public var height: Int { header + times.count * (cellHeight + spacing) + spacing }
    }

    /// The sheet's rows for a recording: every `interval` seconds (by default about ten rows).
    public static func layout(_ inspection: RecordingInspection, every interval: Double? = nil) throws(RecordingReviewError) -> Layout {
        let duration = inspection.report.duration
        let step: Double
        if let interval {
            guard interval.isFinite, interval > 0 else { throw .invalidOptions("the contact sheet interval must be positive, not \(interval)") }
            step = interval
        } else {
            step = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 1800].first { duration / $0 <= 10 } ?? 3600
        }
        let rows = Int((duration / step).rounded(.down)) + 1
        guard rows <= maxRows else {
            throw .invalidOptions(String(format: "a %.0f s recording every %g s needs %d rows; at most %d (use a longer interval)",
                                         duration, step, rows, maxRows))
        }
        let columns = inspection.report.tracks.filter { $0.kind == "video" }.map(\.name)
        return Layout(columns: columns, times: (0..<rows).map { Double($0) * step }, interval: step)
    }

    /// Writes the sheet as PNG and returns its layout (size, rows, columns).
    @discardableResult
    public static func write(_ inspection: RecordingInspection, to url: URL, every interval: Double? = nil,
                             timeout: Duration = .seconds(60)) async throws(RecordingReviewError) -> Layout {
        var layout = try layout(inspection, every: interval)
        guard !layout.columns.isEmpty else { throw .nothingToDraw("\(inspection.url.lastPathComponent) has no video track for a contact sheet") }
        let pads = Dictionary(uniqueKeysWithValues: zip(inspection.info.tracks, inspection.report.tracks)
            .filter { $0.1.kind == "video" }.map { ($0.0.pad, $0.1.name) })
        let collector = CellCollector(pads: Set(pads.keys), times: layout.times, tolerance: max(0.5, layout.interval / 2))
        _ = try await RecordingInspector.inspect(inspection.url, timeout: max(timeout, RecordingInspection.readTimeout(inspection.url))) {
            pad, sample in collector.observe(pad, sample)
        }
        var pictures: [String: [Int: (png: [UInt8], time: Double)]] = [:]
        var undecoded: [String: Set<Int>] = [:]
        for (pad, cells) in collector.cells {
            guard let name = pads[pad] else { continue }
            for (row, cell) in cells {
                do throws(RecordingError) {
                    let caps: Caps
                    do throws(GStreamerError) { caps = try Caps(cell.caps) } catch { throw .gstreamer(error) }
                    let png = try await PictureEncoder.png(decoding: cell.frames.map { ($0.data, $0.pts) }, caps: caps,
                                                           scaledTo: (cellWidth, cellHeight), timeout: timeout)
                    pictures[name, default: [:]][row] = (png, Double(cell.pts) / 1e9)
                } catch {
                    undecoded[name, default: []].insert(row)
                }
            }
        }
        layout.undecodedCells = undecoded.values.reduce(0) { $0 + $1.count }
        let svg = sheetSVG(layout, pictures: pictures, undecoded: undecoded, title: inspection.url.lastPathComponent)
        try SVGRasterizer.write(try await SVGRasterizer.png(svg, timeout: timeout), to: url)
        return layout
    }

    static func sheetSVG(_ layout: Layout, pictures: [String: [Int: (png: [UInt8], time: Double)]], undecoded: [String: Set<Int>],
                         title: String) -> String {
        var out: [String] = []
        out.append(##"<rect width="\##(layout.width)" height="\##(layout.height)" fill="#1b1b1b"/>"##)
        out.append(##"<text x="\##(spacing)" y="22" font-size="14" font-weight="bold" fill="#ffffff">\##(xmlEscaped(title)) — "##
                   + ##"every \##(String(format: "%g", layout.interval)) s</text>"##)
        for (column, name) in layout.columns.enumerated() {
            let left = labelColumn + column * (cellWidth + spacing)
            out.append(##"<text x="\##(left)" y="48" font-size="13" font-weight="bold" fill="#ffffff">\##(xmlEscaped(name))</text>"##)
        }
        for (row, time) in layout.times.enumerated() {
            let top = header + row * (cellHeight + spacing)
            out.append(##"<text x="\##(spacing)" y="\##(top + 20)" font-size="13" fill="#dddddd">\##(String(format: "%.1f s", time))</text>"##)
            for (column, name) in layout.columns.enumerated() {
                let left = labelColumn + column * (cellWidth + spacing)
                guard let picture = pictures[name]?[row] else {
                    out.append(##"<rect x="\##(left)" y="\##(top)" width="\##(cellWidth)" height="\##(cellHeight)" fill="#333333"/>"##)
                    let note = undecoded[name]?.contains(row) == true ? "cannot decode" : "no video"
                    out.append(##"<text x="\##(left + 12)" y="\##(top + cellHeight / 2)" font-size="12" fill="#aaaaaa">\##(note)</text>"##)
                    continue
                }
                out.append(##"<image x="\##(left)" y="\##(top)" width="\##(cellWidth)" height="\##(cellHeight)" "##
                           + ##"href="data:image/png;base64,\##(Data(picture.png).base64EncodedString())"/>"##)
                out.append(##"<rect x="\##(left)" y="\##(top + cellHeight - 20)" width="64" height="20" fill="#000000" fill-opacity="0.6"/>"##)
                out.append(##"<text x="\##(left + 5)" y="\##(top + cellHeight - 6)" font-size="12" fill="#ffffff">"##
                           + ##"\##(String(format: "%.2f s", picture.time))</text>"##)
            }
        }
        return ##"<?xml version="1.0" encoding="UTF-8"?>"## + "\n"
            + ##"<svg xmlns="http://www.w3.org/2000/svg" width="\##(layout.width)" height="\##(layout.height)" "##
            + ##"viewBox="0 0 \##(layout.width) \##(layout.height)" font-family="DejaVu Sans, sans-serif">"## + "\n"
            + out.joined(separator: "\n") + "\n</svg>\n"
    }
}

/// Picks, per video pad, the first frame at or after each row time, with the frames since the
/// key frame before it (what a decoder needs to show it). Fed from the demuxer's streaming thread.
final class CellCollector: Sendable {
    /// An encoded frame and its time, nanoseconds.
    struct Frame {
        var data: [UInt8]
        var pts: UInt64?
    }

    struct Cell {
        var frames: [Frame]
        var pts: UInt64
        var caps: String
    }

    private struct Track {
        var group: [Frame] = []
        var groupBytes = 0
        var nextRow = 0
        var cells: [Int: Cell] = [:]
    }

    private let pads: Set<String>
    private let times: [Double]
    private let tolerance: Double
    private let tracks = Mutex<[String: Track]>([:])

    init(pads: Set<String>, times: [Double], tolerance: Double) {
        self.pads = pads
        self.times = times
        self.tolerance = tolerance
    }

    var cells: [String: [Int: Cell]] { tracks.withLock { $0.mapValues(\.cells) } }

    func observe(_ pad: String, _ sample: Sample) {
        guard pads.contains(pad), let pts = sample.pts else { return }
        let keyFrame = sample.isKeyFrame
        let time = Double(pts) / 1e9
        tracks.withLock { tracks in
            var track = tracks[pad] ?? Track()
            defer { tracks[pad] = track }
            guard track.nextRow < times.count else { return }
            if keyFrame {
                track.group = []
                track.groupBytes = 0
            } else if track.group.isEmpty {
                return // nothing decodable before the first key frame
            }
            track.groupBytes += sample.size
            guard track.groupBytes <= ContactSheet.maxGroupBytes else {
                track.group = []
                return
            }
            track.group.append(Frame(data: sample.bytes, pts: pts))
            while track.nextRow < times.count, times[track.nextRow] <= time + 1e-6 {
                if time - times[track.nextRow] <= tolerance {
                    track.cells[track.nextRow] = Cell(frames: track.group, pts: pts, caps: sample.caps?.description ?? "")
                }
                track.nextRow += 1
            }
        }
    }
}
