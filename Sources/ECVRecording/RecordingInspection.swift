import Foundation
import MediaPipeline
import MediaRuntime

/// A recording read back for review: its tracks, container state, chapters and stats (`report`),
/// and the pictures made from them (`TimelinePicture`, `ContactSheet`). Works on any Matroska,
/// WebM or MP4 file, finalised or cut short by a crash (even before its first media), with or
/// without sidecars.
public struct RecordingInspection: Sendable {
    public let url: URL
    public let info: RecordedFileInfo
    public let report: RecordingReport
    /// The stats sidecar's lines, for the timeline's curves.
    let statsLines: [StatsLine]

    /// Reads `url` and the sidecars beside it; the container is told by the file's first bytes,
    /// not its name. Throws only when the file cannot be read at all or is not a recording.
    public static func inspect(_ url: URL, gapThreshold: Double = 0.2) async throws(RecordingReviewError) -> RecordingInspection {
        let integrity = ContainerScanner.scan(url)
        let info: RecordedFileInfo
        do throws(RecordingReviewError) {
            info = try await RecordingInspector.inspect(url, gapThreshold: gapThreshold, timeout: readTimeout(url))
        } catch {
            // A container header without media (killed before its first cluster or fragment), or
            // an empty file (killed before the header): still a recording, and the report says so.
            guard integrity.container != "unknown" else { throw error }
            info = RecordedFileInfo(tracks: [], readProblem: "\(error)")
        }
        var problems: [String] = []
        var chapters: [RecordingChapter] = [], chaptersFrom = "none"
        switch RecordingSidecars.chapters(of: url) {
        case .read(let list):
            (chapters, chaptersFrom) = (list, "chapters sidecar")
        case .unreadable(let reason):
            problems.append("chapters sidecar: \(reason)")
        case .absent:
            break
        }
        if chaptersFrom == "none", let markers = info.textTracks.first(where: { $0.title == "markers" }) {
            (chapters, chaptersFrom) = (RecordingSidecars.chapters(fromMarkers: markers.texts), "markers track")
        }
        var lines: [StatsLine]?, unreadable = 0
        switch RecordingSidecars.stats(of: url) {
        case .read(let stats): (lines, unreadable) = (stats.lines, stats.unreadable)
        case .unreadable(let reason): problems.append("stats sidecar: \(reason)")
        case .absent: break
        }
        let report = RecordingReport(url: url, info: info, integrity: integrity, statsLines: lines, unreadableStats: unreadable,
                                     chapters: chapters, chaptersFrom: chaptersFrom, sidecarProblems: problems,
                                     gapThreshold: gapThreshold)
        return RecordingInspection(url: url, info: info, report: report, statsLines: lines ?? [])
    }

    /// How long one demuxing pass may take: a minute, and a second more per 5 MB (a long call's
    /// file reads in a fraction of that; a pass that runs out reports what it read).
    static func readTimeout(_ url: URL) -> Duration {
        // Only sizes the timeout: an unreadable file fails in the demuxing pass, with its reason.
        let bytes = ((try? FileManager.default.attributesOfItem(atPath: url.path))?[.size] as? Int) ?? 0
        return .seconds(60 + bytes / 5_000_000)
    }

    /// The report as pretty-printed JSON; a report that does not encode (a number JSON cannot
    /// hold) gives a document with only `error`, saying why.
    public var json: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        do {
            return String(decoding: try encoder.encode(report), as: UTF8.self)
        } catch {
            let failure = ["error": "the report of \(url.lastPathComponent) cannot be written as JSON: \(error)"]
            // A dictionary of strings always encodes.
            return String(decoding: (try? encoder.encode(failure)) ?? Data("{}".utf8), as: UTF8.self)
        }
    }

    /// The report for people, one fact per line.
    public var text: String {
        let report = report
        var lines: [String] = []
        let media = report.tracks.filter { $0.kind != "text" }
        lines.append(String(format: "%@: %.1f s, %d media tracks, %@, %@", url.lastPathComponent, report.duration, media.count,
                            Self.bytes(report.fileBytes), report.integrity.container))
        lines.append("tracks:")
        let width = max(8, report.tracks.map(\.name.count).max() ?? 0) + 1
        for track in report.tracks {
            let size = track.width.flatMap { w in track.height.map { "\(w)x\($0)" } } ?? ""
            let unit = track.kind == "video" ? "frames" : track.kind == "audio" ? "packets" : "texts"
            let span = track.firstTime.flatMap { first in track.lastTime.map { String(format: "%.2f–%.2f s", first, $0) } } ?? "no data"
            lines.append("  " + [Self.padded(track.name + (track.nameInferred ? "*" : ""), width), Self.padded(track.codec, 5), Self.padded(size, 9),
                                 "\(track.frames) \(unit)" + (track.kind == "video" ? " (\(track.keyFrames) key)" : ""),
                                 Self.bytes(track.bytes), span].joined(separator: "  "))
        }
        if report.tracks.contains(where: \.nameInferred) {
            lines.append("  * untitled in the file; named after the audio track that follows it")
        }
        lines.append("chapters (\(report.chaptersFrom)):" + (report.chapters.isEmpty ? " none" : ""))
        for chapter in report.chapters {
            let when = switch (chapter.kind, chapter.end) {
            case (.mark, _): String(format: "at %.2f s", chapter.start)
            case (.period, let end?): String(format: "%.2f–%.2f s", chapter.start, end)
            case (.period, nil): String(format: "from %.2f s, never closed", chapter.start)
            }
            lines.append("  \(chapter.label): \(when)")
        }
        if !report.audioVideo.isEmpty {
            lines.append("audio/video start (audio minus video):")
            for mapping in report.audioVideo {
                lines.append(String(format: "  %@  video %.3f s, audio %.3f s  %+.0f ms", Self.padded(mapping.party, width), mapping.videoStart,
                                    mapping.audioStart, mapping.startOffsetMs))
            }
        }
        if let stats = report.stats {
            lines.append("stats (\(stats.samples) samples" + (stats.unreadableLines > 0 ? ", \(stats.unreadableLines) unreadable lines" : "")
                         + "; min/median/max):")
            for direction in stats.directions {
                var parts = [Self.padded(direction.direction, 8)]
                if let b = direction.bitrate { parts.append(String(format: "bitrate %.0f/%.0f/%.0f kb/s", b.min / 1000, b.median / 1000, b.max / 1000)) }
                if let f = direction.framesPerSecond { parts.append(String(format: "fps %.1f/%.1f/%.1f", f.min, f.median, f.max)) }
                if let r = direction.roundTripTime {
                    parts.append(String(format: "rtt %.1f/%.1f/%.1f ms", r.min * 1000, r.median * 1000, r.max * 1000))
                }
                if let lost = direction.packetsLost { parts.append("lost \(lost) packets") }
                if let offset = direction.audioVideoOffsetMs {
                    parts.append(String(format: "a/v %+.1f/%+.1f/%+.1f ms", offset.min, offset.median, offset.max))
                }
                lines.append("  " + parts.joined(separator: "  "))
            }
        } else {
            lines.append("stats: no sidecar")
        }
        for problem in report.sidecarProblems { lines.append("sidecar problem: \(problem)") }
        lines.append(String(format: "gaps (frames over %.0f ms apart, or a mute chapter):", report.gapThreshold * 1000) + (report.gaps.isEmpty ? " none" : ""))
        for gap in report.gaps {
            lines.append(String(format: "  %@  %.2f–%.2f s  %.2f s  %@", Self.padded(gap.track, width), gap.start, gap.end, gap.duration,
                                gap.reason.rawValue))
        }
        if let problem = report.readProblem { lines.append("read problem: \(problem)") }
        lines.append("container: " + (report.integrity.isFinalised ? "finalised" : "missing " + report.integrity.missing.joined(separator: ", ")))
        lines.append("verdict: \(report.verdict.text)")
        return lines.joined(separator: "\n")
    }

    static func bytes(_ count: Int) -> String {
        count >= 1 << 20 ? String(format: "%.1f MB", Double(count) / 1_048_576) : String(format: "%.0f kB", Double(count) / 1024)
    }

    private static func padded(_ text: String, _ width: Int) -> String {
        text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
    }
}
