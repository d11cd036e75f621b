import Foundation
import MediaRuntime

/// The inspector's verdict plus one rule judged against the recording's span: a media track with
/// far fewer frames or packets than that span needs is "sparse" (one audio packet in a 3 s call
/// is not complete, though it has no gap between frames). Muted stretches count: a mute sends
/// silence or black frames at full rate.
///
/// The rule lives here because the inspector (MediaRuntime's RecordingReport) was out of this
/// change's reach; it belongs beside the other findings there.
struct InspectVerdict {
    /// Fewest per second over the span: Opus sends 50 packets a second (8 at its longest
    /// 120 ms frames); a live picture at least one frame a second.
    static let minimumRate: [String: Double] = ["audio": 5, "video": 1]
    /// Spans shorter than this are too short to judge a rate.
    static let shortestSpan = 1.0

    let original: RecordingReport.Verdict
    let sparse: [String]

    init(_ report: RecordingReport) {
        original = report.verdict
        let media = report.tracks.filter { $0.kind == "audio" || $0.kind == "video" }
        let firsts = media.compactMap(\.firstTime), lasts = media.compactMap(\.lastTime)
        guard let start = firsts.min(), let end = lasts.max(), end - start >= Self.shortestSpan else { sparse = []; return }
        let span = end - start
        sparse = media.compactMap { track in
            guard track.frames > 0, let minimum = Self.minimumRate[track.kind], Double(track.frames) / span < minimum else { return nil }
            let unit = track.kind == "audio" ? "packet" : "frame"
            return String(format: "%@: %d %@%@ in %.1f s, at least %.0f a second expected", track.name, track.frames, unit,
                          track.frames == 1 ? "" : "s", span, minimum)
        }
    }

    var isComplete: Bool { original.findings == [.complete] && sparse.isEmpty }

    var findings: [String] {
        let kept = original.findings.filter { $0 != .complete || sparse.isEmpty }.map(\.rawValue)
        return kept + (sparse.isEmpty ? [] : ["sparse"])
    }

    var details: [String] {
        let kept = original.findings == [.complete] && !sparse.isEmpty ? [] : original.details
        return kept + (sparse.isEmpty ? [] : ["sparse (" + sparse.joined(separator: "; ") + ")"])
    }

    var summary: String { details.joined(separator: "; ") }

    /// The inspector's text with this verdict, under the file's own name.
    func text(_ text: String, name: String, shownAs view: URL) -> String {
        var lines = text.components(separatedBy: "\n")
        if let first = lines.first, first.hasPrefix(view.lastPathComponent + ":") {
            lines[0] = name + first.dropFirst(view.lastPathComponent.count)
        }
        if let index = lines.lastIndex(where: { $0.hasPrefix("verdict: ") }) { lines[index] = "verdict: " + summary }
        return lines.joined(separator: "\n")
    }

    /// The inspector's JSON with this verdict and the file's own path.
    func json(_ json: String, file: URL) -> String {
        guard var report = (try? JSONSerialization.jsonObject(with: Data(json.utf8))) as? [String: Any] else { return json } // not an object: as it came
        report["file"] = file.path
        report["verdict"] = ["findings": findings, "details": details]
        guard let data = try? JSONSerialization.data(withJSONObject: report, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]) else { return json } // it came from JSON
        return String(decoding: data, as: UTF8.self)
    }
}
