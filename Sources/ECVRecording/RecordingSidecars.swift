import Foundation
import MediaPipeline
import MediaRuntime

/// Reads a recording's sidecars back (`<file>.chapters.json`, `<file>.stats.ndjson`), bounded:
/// an oversized or malformed sidecar is reported, never trusted or fatal.
enum RecordingSidecars {
    static let maxChaptersBytes = 4 << 20
    static let maxStatsBytes = 64 << 20
    static let maxStatsLineBytes = 4096

    enum Read<Value> {
        case absent
        case unreadable(String)
        case read(Value)
    }

    static func chaptersURL(of url: URL) -> URL { URL(fileURLWithPath: url.path + ".chapters.json") }
    static func statsURL(of url: URL) -> URL { URL(fileURLWithPath: url.path + ".stats.ndjson") }

    static func chapters(of url: URL) -> Read<[RecordingChapter]> {
        switch contents(of: chaptersURL(of: url), limit: maxChaptersBytes) {
        case .absent: return .absent
        case .unreadable(let reason): return .unreadable(reason)
        case .read(let data):
            // Reported below as unreadable; JSONDecoder's coding path would tell a reviewer no more.
            guard let document = try? JSONDecoder().decode(ChaptersDocument.self, from: data) else {
                return .unreadable("not a chapters document")
            }
            let valid = document.chapters.filter { chapter in
                chapter.start.isFinite && chapter.start >= 0 && (chapter.end.map { $0.isFinite && $0 >= chapter.start } ?? true)
            }
            return .read(valid.sorted { $0.start < $1.start })
        }
    }

    /// Whole lines that decode; the count of the others (a crash can leave at most a torn last one).
    static func stats(of url: URL) -> Read<(lines: [StatsLine], unreadable: Int)> {
        switch contents(of: statsURL(of: url), limit: maxStatsBytes) {
        case .absent: return .absent
        case .unreadable(let reason): return .unreadable(reason)
        case .read(let data):
            let decoder = JSONDecoder()
            var lines: [StatsLine] = [], unreadable = 0
            for line in data.split(separator: UInt8(ascii: "\n")) where !line.isEmpty {
                // A line that does not decode is counted in `unreadable`, which the report shows.
                guard line.count <= maxStatsLineBytes, let stats = try? decoder.decode(StatsLine.self, from: Data(line)),
                      stats.time.isFinite, stats.time >= 0 else {
                    unreadable += 1
                    continue
                }
                lines.append(stats)
            }
            return .read((lines, unreadable))
        }
    }

    private static func contents(of url: URL, limit: Int) -> Read<Data> {
        let attributes: [FileAttributeKey: Any]
        do {
            attributes = try FileManager.default.attributesOfItem(atPath: url.path)
        } catch {
            // Only a sidecar that is not there is absent; one that is there but cannot be looked at is unreadable.
            return FileManager.default.fileExists(atPath: url.path) ? .unreadable(error.localizedDescription) : .absent
        }
        guard attributes[.type] as? FileAttributeType == .typeRegular else { return .unreadable("not a regular file") }
        let size = (attributes[.size] as? Int) ?? 0
        guard size <= limit else { return .unreadable("\(size) bytes, over the \(limit)-byte limit") }
        do {
            return .read(try Data(contentsOf: url))
        } catch {
            return .unreadable("cannot be read: \(error.localizedDescription)")
        }
    }

    /// Chapters rebuilt from the markers track's texts: "begin X" / "end X" delimit periods,
    /// other texts are marks (the recorder's own "recording started" is left out).
    static func chapters(fromMarkers texts: [RecordedFileInfo.TimedText]) -> [RecordingChapter] {
        var chapters: [RecordingChapter] = []
        for text in texts where !text.text.isEmpty && text.text != "recording started" {
            if text.text.hasPrefix("begin ") {
                chapters.append(RecordingChapter(kind: .period, label: String(text.text.dropFirst(6)), start: text.time, end: nil))
            } else if text.text.hasPrefix("end "), let open = chapters.lastIndex(where: {
                $0.kind == .period && $0.end == nil && $0.label == String(text.text.dropFirst(4))
            }) {
                chapters[open].end = text.time
            } else {
                chapters.append(RecordingChapter(kind: .mark, label: text.text, start: text.time, end: nil))
            }
        }
        return chapters
    }
}
