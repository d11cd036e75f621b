@testable import ECVRecording
import Foundation
import FoundationXML
import GLibCore
import GStreamer
import MediaPipeline
@testable import MediaRuntime
import MediaTestSupport
import Testing

/// `RecordingInspection` on recordings these tests make: the report matches what the test did,
/// and the timeline and contact sheet are well-formed pictures of it.
@Suite(.serialized) struct RecordingInspectionTests {
    /// Two parties (agent in blue, caller in red); a hold; the caller's video muted for a while by
    /// taking its stream away (a real dropout of frames) under a "caller video muted" period.
    @Test func aHeldAndMutedCallIsReportedAndDrawnAsItHappened() async throws {
        let (agent, caller, recorder, url) = try await recordingTwoParties(to: "held-and-muted.mkv")
        defer { agent.stop(); caller.stop() }
        try await Task.sleep(for: .milliseconds(800))
        let holdBegan = recorder.mediaTime.seconds
        try recorder.beginPeriod("hold")
        try await Task.sleep(for: .milliseconds(1000))
        let holdEnded = recorder.mediaTime.seconds
        try recorder.endPeriod("hold")
        try await Task.sleep(for: .milliseconds(500))
        let muteBegan = recorder.mediaTime.seconds
        try recorder.beginPeriod("caller video muted")
        recorder.detach(.remoteVideo)
        try await Task.sleep(for: .milliseconds(1200))
        let muteEnded = recorder.mediaTime.seconds
        try recorder.attach(.remoteVideo, to: caller.videoTee)
        try recorder.endPeriod("caller video muted")
        try await Task.sleep(for: .milliseconds(2000))
        for second in 1...2 {
            try recorder.record(stats: DirectionStats(direction: .sent, bitrate: Double(second) * 300_000, packetsLost: second * 5,
                                                      roundTripTime: 0.02))
        }
        let summary = try await recorder.stop()

        let inspection = try await RecordingInspection.inspect(url)
        let report = inspection.report
        // Tracks: both parties, by name, with their format.
        #expect(report.tracks.map(\.name) == ["agent video", "agent audio", "caller video", "caller audio", "markers"], "\(report.tracks)")
        #expect(report.parties == ["agent", "caller"])
        for track in report.tracks where track.kind == "video" {
            #expect(track.codec == "VP8" && track.width == 320 && track.height == 240 && track.frames > 60 && track.keyFrames >= 3)
        }
        #expect(report.tracks.filter { $0.kind == "audio" }.allSatisfy { $0.codec == "OPUS" && $0.frames > 100 })
        #expect(abs(report.duration - summary.duration.seconds) <= 0.5, "\(report.duration) vs \(summary.duration)")
        #expect(report.integrity.isFinalised, "\(report.integrity.missing)")

        // Chapters at the times the test set them.
        let hold = try #require(report.chapters.first { $0.label == "hold" })
        let holdEnd = try #require(hold.end)
        #expect(abs(hold.start - holdBegan) <= 0.2 && abs(holdEnd - holdEnded) <= 0.2, "\(hold) vs \(holdBegan)–\(holdEnded)")
        let mute = try #require(report.chapters.first { $0.label == "caller video muted" })
        let muteEnd = try #require(mute.end)
        #expect(abs(mute.start - muteBegan) <= 0.2 && abs(muteEnd - muteEnded) <= 0.2, "\(mute) vs \(muteBegan)–\(muteEnded)")
        #expect(report.chaptersFrom == "chapters sidecar")

        // The mute shows as the chapter and as the frames that stopped; nothing else has gaps.
        let muted = try #require(report.gaps.first { $0.reason == .muted })
        #expect(muted.track == "caller video" && abs(muted.start - muteBegan) <= 0.2)
        let dropout = try #require(report.gaps.first { $0.reason == .noFrames }, "\(report.gaps)")
        #expect(dropout.track == "caller video")
        #expect(abs(dropout.start - muteBegan) <= 0.2, "the last frame before the mute at \(dropout.start), muted at \(muteBegan)")
        // Video resumes at the first key frame after the stream is back (one a second).
        #expect(dropout.end >= muteEnded - 0.2 && dropout.end <= muteEnded + 1.3, "frames resume at \(dropout.end), unmuted at \(muteEnded)")
        #expect(report.gaps.filter { $0.reason == .noFrames }.count == 1, "\(report.gaps)")
        #expect(report.verdict.findings == [.gaps], "\(report.verdict.text)")

        // Stats: per direction, min/median/max, and the loss during the recording.
        let sent = try #require(report.stats?.directions.first { $0.direction == "sent" })
        #expect(sent.samples == 2 && sent.bitrate?.min == 300_000 && sent.bitrate?.max == 600_000 && sent.packetsLost == 5)

        // The JSON is the same report.
        let decoded = try JSONDecoder().decode(RecordingReport.self, from: Data(inspection.json.utf8))
        #expect(decoded.chapters == report.chapters && decoded.gaps == report.gaps && decoded.verdict == report.verdict)
        #expect(inspection.text.contains("caller video muted:") && inspection.text.contains("verdict: gaps"), "\(inspection.text)")

        // The timeline: valid XML, one lane per track, a band per period, and a PNG of its size.
        let picture = TimelinePicture(inspection)
        let svg = try SVGSummary(picture.svg)
        #expect(svg.lanes == report.tracks.map(\.name))
        #expect(svg.chapterShapes == report.chapters.count)
        #expect(svg.width == TimelinePicture.width && svg.height == picture.height)
        let png = temporaryFile("timeline.png"), svgFile = temporaryFile("timeline.svg")
        try await inspection.writeTimeline(svg: svgFile, png: png)
        #expect(try String(contentsOf: svgFile, encoding: .utf8) == picture.svg)
        let timeline = try await decodePicture(png)
        #expect(timeline.width == TimelinePicture.width && timeline.height == picture.height)

        // The contact sheet: a row a second, agent (blue) left of caller (red).
        let sheetFile = temporaryFile("sheet.png")
        let layout = try await ContactSheet.write(inspection, to: sheetFile, every: 1)
        #expect(layout.columns == ["agent video", "caller video"])
        #expect(layout.times.count == Int(report.duration) + 1)
        let sheet = try await decodePicture(sheetFile)
        #expect(sheet.width == layout.width && sheet.height == layout.height)
        let row = 2, cell = (width: ContactSheet.cellWidth, height: ContactSheet.cellHeight)
        let top = ContactSheet.header + row * (cell.height + ContactSheet.spacing) + 20
        let left = meanColor(sheet, x: ContactSheet.labelColumn + 20, y: top, width: cell.width - 40, height: cell.height - 60)
        let right = meanColor(sheet, x: ContactSheet.labelColumn + cell.width + ContactSheet.spacing + 20, y: top,
                              width: cell.width - 40, height: cell.height - 60)
        #expect(left.blue > 180 && left.red < 80, "the agent's cell: \(left)")
        #expect(right.red > 180 && right.blue < 80, "the caller's cell: \(right)")
    }

    /// A file cut in the middle (as a disk-full or a copy interrupted leaves it) is read up to
    /// the cut and says what is missing; a file that is no recording is an error naming it.
    @Test func aTruncatedFileSaysWhatIsMissingAndGarbageIsRefused() async throws {
        let call = try await FakeCall()
        defer { call.stop() }
        let url = temporaryFile("whole.mkv")
        let recorder = try CallRecorder(url: url, tracks: [RecordedTrack(.localVideo, codec: .vp8), RecordedTrack(.localAudio, codec: .opus)])
        try await recorder.start()
        try recorder.attach(.localVideo, to: call.videoTee)
        try recorder.attach(.localAudio, to: call.audioTee)
        try await waitForTracks(recorder, count: 2)
        try await Task.sleep(for: .seconds(3))
        _ = try await recorder.stop()
        let whole = try await RecordingInspection.inspect(url).report
        #expect(whole.integrity.isFinalised, "\(whole.integrity.missing)")
        #expect(whole.verdict.findings == [.partyMissing], "one party only: \(whole.verdict.text)")

        // Labels come from a file anyone could have edited: they are text in the pictures, never markup.
        let hostile = "<script>alert(\"x\")</script> & ]]> \u{01}\u{07} 'hold'"
        let document = ChaptersDocument(chapters: [RecordingChapter(kind: .period, label: hostile, start: 0.5, end: 1.5)])
        try JSONEncoder().encode(document).write(to: URL(fileURLWithPath: url.path + ".chapters.json"))
        let labelled = try await RecordingInspection.inspect(url)
        #expect(labelled.report.chapters.map(\.label) == [hostile])
        let svg = try SVGSummary(TimelinePicture(labelled).svg)
        #expect(svg.chapterShapes == 1 && svg.lanes.count == 3)
        let labelledPNG = temporaryFile("labelled.png")
        try await labelled.writeTimeline(png: labelledPNG)
        #expect(try await decodePicture(labelledPNG).width == TimelinePicture.width)

        let data = try Data(contentsOf: url)
        let cut = temporaryFile("cut.mkv")
        try data.prefix(data.count * 6 / 10).write(to: cut)
        try Data("{\"chapters\": [{\"kind\": \"mark\"".utf8).write(to: URL(fileURLWithPath: cut.path + ".chapters.json"))
        try Data("{\"time\":1,\"direction\":\"sent\",\"bitrate\":1000}\n{\"time\":2,\"direc".utf8)
            .write(to: URL(fileURLWithPath: cut.path + ".stats.ndjson"))
        let partial = try await RecordingInspection.inspect(cut).report
        #expect(partial.integrity.missing.contains { $0.hasPrefix("the last cluster is cut short") }, "\(partial.integrity.missing)")
        #expect(partial.integrity.missing.contains("no index (Cues)"))
        #expect(partial.verdict.findings.contains(.cutShort))
        #expect(partial.duration > 0.5 && partial.duration < whole.duration - 0.3, "\(partial.duration) of \(whole.duration)")
        #expect(partial.sidecarProblems == ["chapters sidecar: not a chapters document"])
        #expect(partial.stats?.samples == 1 && partial.stats?.unreadableLines == 1)

        // Killed before any media, or before anything at all: still a report, saying so.
        let headerOnly = temporaryFile("header-only.mkv"), empty = temporaryFile("empty.mkv")
        try data.prefix(upTo: try #require(data.firstRange(of: Data([0x1F, 0x43, 0xB6, 0x75]))).lowerBound).write(to: headerOnly)
        try Data().write(to: empty)
        let noMedia = try await RecordingInspection.inspect(headerOnly).report
        #expect(noMedia.integrity.missing.contains("no media (no cluster)") && noMedia.duration == 0, "\(noMedia.integrity.missing)")
        #expect(noMedia.verdict.findings == [.cutShort, .partyMissing], "\(noMedia.verdict.text)")
        let nothing = try await RecordingInspection.inspect(empty).report
        #expect(nothing.integrity.missing == ["the file is empty (nothing was written)"] && nothing.tracks.isEmpty)
        #expect(nothing.verdict.findings == [.cutShort, .partyMissing])

        let garbage = temporaryFile("garbage.mkv")
        try Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 31) }).write(to: garbage)
        await #expect(throws: RecordingReviewError.notARecording(path: garbage.path)) { _ = try await RecordingInspection.inspect(garbage) }
        let absent = temporaryFile("absent.mkv")
        await #expect(throws: RecordingReviewError.cannotRead(path: absent.path, reason: "no such readable file")) {
            _ = try await RecordingInspection.inspect(absent)
        }
    }

    /// The agent (blue) and the caller (red) as fake calls, recorded with separate tracks until
    /// every track has its first buffer.
    private func recordingTwoParties(to name: String) async throws -> (FakeCall, FakeCall, CallRecorder, URL) {
        let agent = try await FakeCall(pattern: "blue")
        let caller = try await FakeCall(pattern: "red")
        let url = temporaryFile(name)
        do {
            let recorder = try CallRecorder(url: url, tracks: TrackRole.allCases.map { RecordedTrack($0, codec: $0.kind == .video ? .vp8 : .opus) },
                                            labels: RecordingLabels(local: "agent", remote: "caller"))
            try await recorder.start()
            try recorder.attach(.localVideo, to: agent.videoTee)
            try recorder.attach(.localAudio, to: agent.audioTee)
            try recorder.attach(.remoteVideo, to: caller.videoTee)
            try recorder.attach(.remoteAudio, to: caller.audioTee)
            try await waitForTracks(recorder, count: 4)
            return (agent, caller, recorder, url)
        } catch {
            agent.stop()
            caller.stop()
            throw error
        }
    }

    /// Each party's audio/video mapping: where its audio and video begin in the file, and the
    /// stats sidecar's audio-minus-video offset against capture time, judged against ITU-R
    /// BT.1359's window (audio up to 45 ms early, 125 ms late).
    @Test func audioVideoMappingIsReportedAndJudged() async throws {
        let (agent, caller, recorder, url) = try await recordingTwoParties(to: "mapping.mkv")
        defer { agent.stop(); caller.stop() }
        try await Task.sleep(for: .seconds(1))
        _ = try await recorder.stop()
        let stats = URL(fileURLWithPath: url.path + ".stats.ndjson")
        func lines(_ offsets: [Double]) -> Data {
            Data(offsets.enumerated().map { #"{"time":\#($0.offset + 1),"direction":"received","avOffsetMs":\#($0.element)}"# + "\n" }.joined().utf8)
        }

        try lines([1.5, -0.5, 0.5]).write(to: stats)
        let inSync = try await RecordingInspection.inspect(url)
        #expect(inSync.report.audioVideo.map(\.party) == ["agent", "caller"], "\(inSync.report.audioVideo)")
        for mapping in inSync.report.audioVideo {
            let tracks = inSync.report.tracks.filter { $0.party == mapping.party }
            #expect(mapping.videoStart == tracks.first { $0.kind == "video" }?.firstTime)
            #expect(mapping.audioStart == tracks.first { $0.kind == "audio" }?.firstTime)
        }
        let received = try #require(inSync.report.stats?.directions.first { $0.direction == "received" })
        #expect(received.audioVideoOffsetMs.map { [$0.min, $0.median, $0.max] } == [-0.5, 0.5, 1.5])
        #expect(inSync.report.verdict.isComplete, "\(inSync.report.verdict.text)")
        #expect(inSync.text.contains("a/v -0.5/+0.5/+1.5 ms") && inSync.text.contains("audio/video start"), "\(inSync.text)")

        try lines([180, 150, 210]).write(to: stats)
        let late = try await RecordingInspection.inspect(url).report
        #expect(late.verdict.findings == [.outOfSync], "\(late.verdict.text)")
        #expect(late.verdict.text == "out of sync (received audio 180 ms after its video at the median)")
        try lines([-60, -50, -70]).write(to: stats)
        let early = try await RecordingInspection.inspect(url).report
        #expect(early.verdict.text == "out of sync (received audio 60 ms before its video at the median)")
    }

    @Test(arguments: [(RecordedCodec.vp8, RecordingFormat.webm), (.h264, .mp4)])
    func aFinalisedFileOfEachFormatIsComplete(codec: RecordedCodec, format: RecordingFormat) async throws {
        let call = try await FakeCall(video: codec)
        defer { call.stop() }
        let url = temporaryFile("whole.\(format.fileExtension)")
        let recorder = try CallRecorder(url: url, format: format, tracks: [RecordedTrack(.localVideo, codec: codec), RecordedTrack(.localAudio, codec: .opus)])
        try await recorder.start()
        try recorder.attach(.localVideo, to: call.videoTee)
        try recorder.attach(.localAudio, to: call.audioTee)
        try await waitForTracks(recorder, count: 2)
        try await Task.sleep(for: .seconds(2))
        _ = try await recorder.stop()
        let report = try await RecordingInspection.inspect(url).report
        #expect(report.integrity.container == (format == .mp4 ? "mp4" : "matroska"))
        #expect(report.integrity.isFinalised, "\(report.integrity.missing)")
        #expect(report.tracks.filter { $0.kind == "video" }.first?.codec == codec.rawValue)
        #expect(report.gaps.isEmpty, "\(report.gaps)")
    }
}

/// What the tests check in an SVG: that it parses, its size, its lanes and chapter shapes.
struct SVGSummary {
    var width = 0, height = 0
    var lanes: [String] = []
    var chapterShapes = 0

    init(_ text: String) throws {
        let parser = XMLParser(data: Data(text.utf8))
        let delegate = Collector()
        parser.delegate = delegate
        guard parser.parse() else { throw TestFailure("not well-formed XML: \(parser.parserError.map { "\($0)" } ?? "?")") }
        self = delegate.summary
    }

    private final class Collector: NSObject, XMLParserDelegate {
        var summary = SVGSummary()
        func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
                    attributes: [String: String] = [:]) {
            if name == "svg" {
                summary.width = Int(attributes["width"] ?? "") ?? 0
                summary.height = Int(attributes["height"] ?? "") ?? 0
            }
            if name == "g", attributes["class"] == "lane" { summary.lanes.append(attributes["data-track"] ?? "") }
            if attributes["class"] == "chapter" { summary.chapterShapes += 1 }
        }
    }

    private init() {}
}

/// Decodes a PNG file to RGBA.
func decodePicture(_ url: URL) async throws -> VideoFrame {
    let pipeline = try Pipeline(launch: "filesrc location=\(url.path) ! pngdec ! videoconvert ! video/x-raw,format=RGBA ! appsink name=sink sync=false")
    let sink = try AppSink(try #require(pipeline.element(named: "sink")))
    let picture = Locked<VideoFrame?>(nil)
    sink.setSampleHandler { sample in picture.withLock { $0 = sample.videoFrame() } }
    try await pipeline.play()
    try await pipeline.waitForEndOfStream()
    pipeline.stop()
    return try #require(picture.value, "\(url.lastPathComponent) did not decode")
}
