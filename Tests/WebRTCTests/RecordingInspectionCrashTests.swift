import ECVRecording
import Foundation
import MediaRuntime
import MediaTestSupport
import Testing
@testable import WebRTC

/// `RecordingInspection` on a call recording whose process was killed with SIGKILL (the
/// `ecv-recording-probe` child): it reads what is there, says what is missing, and still draws.
@Suite(.serialized) struct RecordingInspectionCrashTests {
    @Test(arguments: [("VP8", "matroska", 2.0, "no index (Cues)"), ("H264", "mp4", 3.0, "no fragment index (mfra)")])
    func aKilledRecordingIsInspectedAndSaysWhatIsMissing(codec: String, format: String, allowedLoss: Double, missing: String) async throws {
        let url = recordingFile("killed-inspected.\(format == "mp4" ? "mp4" : "mkv")")
        let probe = try RecordingProbe(output: url, codec: codec, format: format)
        defer { probe.terminate() }
        let (zero, fileStart) = try await probe.waitUntilRecording()
        // Killed once the file holds some of everything: media on all four tracks, and stats with
        // bitrates both ways (a busy machine takes longer to get there, never to a different file).
        let stats = URL(fileURLWithPath: url.path + ".stats.ndjson")
        try await eventually(.seconds(60), "30 frames on every track and three stats samples with bitrates per direction") {
            let lines = ((try? String(contentsOf: stats, encoding: .utf8)) ?? "").split(separator: "\n")
            let rated = lines.filter { $0.contains("\"bitrate\":") && !$0.contains("\"bitrate\":0,") }
            guard rated.filter({ $0.contains("\"sent\"") }).count >= 3, rated.filter({ $0.contains("\"received\"") }).count >= 3,
                  let growing = try? await RecordingInspector.inspect(url) else { return false }
            return growing.tracks.filter { !$0.isText && $0.frames > 30 }.count == 4
        }
        let killedAt = Date().timeIntervalSince1970
        probe.kill()
        let fileTimeAtKill = killedAt - zero - fileStart

        let inspection = try await RecordingInspection.inspect(url)
        let report = inspection.report
        #expect(!report.integrity.isFinalised && report.integrity.missing.contains(missing), "\(report.integrity.missing)")
        #expect(report.verdict.findings.contains(.cutShort), "\(report.verdict.text)")
        #expect(!report.verdict.findings.contains(.partyMissing), "\(report.verdict.text)")
        #expect(report.verdict.text.contains("cut short"))
        let media = report.tracks.filter { $0.kind != "text" }
        #expect(media.filter { $0.kind == "video" }.count == 2 && media.filter { $0.kind == "audio" }.count == 2, "\(report.tracks)")
        #expect(media.allSatisfy { $0.frames > 30 }, "\(media.map { ($0.name, $0.frames) })")
        if format == "matroska" { #expect(Set(report.parties) == ["agent", "caller"], "\(report.tracks.map(\.name))") }
        #expect(report.duration >= fileTimeAtKill - allowedLoss && report.duration <= fileTimeAtKill + 0.5,
                "plays to \(report.duration) s, killed at \(fileTimeAtKill) s")
        let directions = report.stats?.directions ?? []
        #expect(directions.map(\.direction) == ["sent", "received"] && directions.allSatisfy { ($0.bitrate?.median ?? 0) > 10_000 },
                "\(directions)")

        let png = recordingFile("killed-timeline.png"), sheet = recordingFile("killed-sheet.png")
        try await inspection.writeTimeline(png: png)
        let picture = TimelinePicture(inspection)
        #expect(picture.svg.components(separatedBy: #"<g class="lane""#).count - 1 == report.tracks.count)
        let timeline = try await decodeFrame(of: png, with: "pngdec")
        #expect(timeline.width == TimelinePicture.width && timeline.height == picture.height)
        let layout = try await ContactSheet.write(inspection, to: sheet, every: 1)
        let decoded = try await decodeFrame(of: sheet, with: "pngdec")
        #expect(layout.columns.count == 2 && decoded.width == layout.width && decoded.height == layout.height)
    }
}
