import ECVRecording
import Foundation
import GStreamer
import MediaPipeline
@testable import MediaRuntime
import Testing

/// Marks and periods land on the media timeline: in the file's markers track and the chapters sidecar.
@Suite(.serialized) struct RecordingMarkerTests {
    @Test func holdPeriodAndMarkAreInTheFileAtTheirMediaTime() async throws {
        let call = try await FakeCall()
        defer { call.stop() }
        let url = temporaryFile("markers.mkv")
        let recorder = try CallRecorder(url: url, tracks: [RecordedTrack(.localVideo, codec: .vp8), RecordedTrack(.localAudio, codec: .opus)])
        try await recorder.start()
        try recorder.attach(.localVideo, to: call.videoTee)
        try recorder.attach(.localAudio, to: call.audioTee)
        try await waitForTracks(recorder, count: 2)
        try await Task.sleep(for: .milliseconds(700))
        let holdBegan = recorder.mediaTime.seconds
        try recorder.beginPeriod("hold")
        try recorder.beginPeriod("hold") // already open: nothing changes
        try await Task.sleep(for: .milliseconds(1200))
        let marked = recorder.mediaTime.seconds
        try recorder.mark("transfer requested")
        try await Task.sleep(for: .milliseconds(800))
        let holdEnded = recorder.mediaTime.seconds
        try recorder.endPeriod("hold")
        try recorder.endPeriod("mute") // never opened: nothing happens
        try recorder.beginPeriod("mute")
        try await Task.sleep(for: .milliseconds(600))
        let summary = try await recorder.stop()

        // The sidecar: the hold as a range, the mark as a point, the mute closed at the end.
        let document = try JSONDecoder().decode(ChaptersDocument.self, from: Data(contentsOf: try #require(recorder.chaptersURL)))
        #expect(document.chapters.count == 3, "\(document.chapters)")
        let hold = try #require(document.chapters.first { $0.label == "hold" })
        let holdEnd = try #require(hold.end)
        #expect(hold.kind == .period && abs(hold.start - holdBegan) <= 0.5 && abs(holdEnd - holdEnded) <= 0.5)
        let mark = try #require(document.chapters.first { $0.label == "transfer requested" })
        #expect(mark.kind == .mark && abs(mark.start - marked) <= 0.5 && mark.end == nil)
        let mute = try #require(document.chapters.first { $0.label == "mute" })
        let muteEnd = try #require(mute.end)
        #expect(abs(muteEnd - summary.duration.seconds) <= 0.5)

        // The file: the markers text track holds the same events at the same times.
        let info = try await RecordingInspector.inspect(url)
        let markers = try #require(info.textTracks.first)
        let texts = markers.texts.filter { !$0.text.isEmpty }
        func time(of text: String) throws -> Double { try #require(texts.first { $0.text == text }, "\(texts)").time }
        let (begin, transfer, end) = (try time(of: "begin hold"), try time(of: "transfer requested"), try time(of: "end hold"))
        #expect(abs(begin - holdBegan) <= 0.5)
        #expect(abs(transfer - marked) <= 0.5)
        #expect(abs(end - holdEnded) <= 0.5)
        #expect(texts.first?.text == "recording started")
        #expect(info.videoTracks.count == 1 && info.audioTracks.count == 1)
    }

    /// A chapters sidecar that can no longer be replaced is reported: by each mark that could not
    /// save it, once in `problems` and the events, and in the summary; the marks themselves stand.
    @Test func aChaptersSidecarThatCannotBeWrittenIsReported() async throws {
        let call = try await FakeCall()
        defer { call.stop() }
        let recorder = try CallRecorder(url: temporaryFile("unwritable.mkv"), tracks: [RecordedTrack(.localVideo, codec: .vp8)])
        let events = recorder.events()
        try await recorder.start()
        try recorder.attach(.localVideo, to: call.videoTee)
        try await waitForTracks(recorder, count: 1)
        let sidecar = try #require(recorder.chaptersURL)
        try FileManager.default.removeItem(at: sidecar)
        try FileManager.default.createDirectory(at: sidecar, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(at: sidecar) }
        for label in ["first", "second"] {
            #expect {
                try recorder.mark(label)
            } throws: { error in
                if case RecordingError.cannotWrite(sidecar.path, _) = error { true } else { false }
            }
        }
        #expect(recorder.problems.count == 1, "\(recorder.problems)")
        #expect(recorder.chapters.map(\.label) == ["first", "second"])
        let summary = try await recorder.stop()
        #expect(summary.problems == recorder.problems)
        var failures: [String] = []
        for await event in events { if case .failed(let text) = event { failures.append(text) } }
        #expect(failures == summary.problems)
    }

    @Test func statsLinesCarryMediaTimeAndFrameRate() async throws {
        let call = try await FakeCall()
        defer { call.stop() }
        let recorder = try CallRecorder(url: temporaryFile("stats.mkv"), tracks: [RecordedTrack(.localVideo, codec: .vp8)])
        try await recorder.start()
        try recorder.attach(.localVideo, to: call.videoTee)
        try await waitForTracks(recorder, count: 1)
        for second in 1...3 {
            try await Task.sleep(for: .seconds(1))
            try recorder.record(stats: DirectionStats(direction: .sent, bitrate: Double(second) * 1000, packetsLost: 0, roundTripTime: 0.01))
        }
        _ = try await recorder.stop()
        let text = try String(contentsOf: try #require(recorder.statsURL), encoding: .utf8)
        let lines = try text.split(separator: "\n").map { try JSONDecoder().decode(StatsLine.self, from: Data($0.utf8)) }
        #expect(lines.count == 3)
        #expect(lines.map(\.bitrate) == [1000, 2000, 3000])
        #expect(zip(lines, lines.dropFirst()).allSatisfy { $0.time < $1.time })
        // The fake call sends 30 frames a second; the recorder counted them through its depayloader.
        let rates = lines.dropFirst().compactMap(\.fps)
        #expect(rates.count == 2 && rates.allSatisfy { $0 > 20 && $0 < 40 }, "\(rates)")
    }
}
