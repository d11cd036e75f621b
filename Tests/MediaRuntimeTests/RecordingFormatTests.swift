import ECVRecording
import Foundation
import GStreamer
import MediaPipeline
@testable import MediaRuntime
import Testing

/// Containers and codecs: what each format records, and the clear errors for what it cannot hold.
@Suite(.serialized) struct RecordingFormatTests {
    @Test func webmRecordsVP8AndOpus() async throws {
        let info = try await recordTwoSeconds(codec: .vp8, format: .webm)
        #expect(info.videoTracks.map(\.mediaType) == ["video/x-vp8"] && info.audioTracks.map(\.mediaType) == ["audio/x-opus"])
        #expect(info.textTracks.isEmpty, "WebM keeps markers in the sidecar only")
        #expect(info.videoTracks[0].frames > 20 && info.audioTracks[0].frames > 50)
    }

    @Test func fragmentedMP4RecordsH264AndOpus() async throws {
        let info = try await recordTwoSeconds(codec: .h264, format: .mp4)
        #expect(info.videoTracks.map(\.mediaType) == ["video/x-h264"] && info.audioTracks.map(\.mediaType) == ["audio/x-opus"])
        #expect(info.videoTracks[0].frames > 20 && info.audioTracks[0].frames > 50)
    }

    /// GStreamer 1.22's matroskamux writes tag values serialized (`"Jane\ Doe video"`); after
    /// finalising, the file holds each track title as plain text, as ffmpeg and PyAV show it.
    @Test func trackTitlesStayPlainTextInAFinalisedFile() async throws {
        let call = try await FakeCall(video: .vp8)
        defer { call.stop() }
        let url = temporaryFile("titles.mkv")
        let recorder = try CallRecorder(url: url, tracks: [RecordedTrack(.localVideo, codec: .vp8), RecordedTrack(.localAudio, codec: .opus)],
                                        labels: RecordingLabels(local: "Jane Doe (ü)", remote: "agent"))
        try await recorder.start()
        try recorder.attach(.localVideo, to: call.videoTee)
        try recorder.attach(.localAudio, to: call.audioTee)
        try await waitForTracks(recorder, count: 2)
        _ = try await recorder.stop()
        let bytes = try Data(contentsOf: url)
        for title in ["Jane Doe (ü) video", "Jane Doe (ü) audio"] {
            #expect(bytes.range(of: Data(MatroskaTagRepair.serialized(title).utf8)) == nil, "quoted \(title) left in the file")
        }
        let info = try await RecordingInspector.inspect(url)
        #expect(info.videoTracks.map(\.title) == ["Jane Doe (ü) video"])
        #expect(info.audioTracks.map(\.title) == ["Jane Doe (ü) audio"])
        #expect(MatroskaTagRepair.serialized("caller video") == #""caller\ video""#)
        #expect(MatroskaTagRepair.serialized("caller_video") == "caller_video")
        #expect(MatroskaTagRepair.serialized("ü") == #""\303\274""#)
    }

    @Test func webmRefusesH264NamingIt() throws {
        let error = try #require(throws: RecordingError.self) {
            _ = try CallRecorder(url: temporaryFile("h264.webm"), format: .webm,
                                 tracks: [RecordedTrack(.remoteVideo, codec: .h264), RecordedTrack(.remoteAudio, codec: .opus)])
        }
        guard case .unsupportedCodec(let codec, .webm?, _) = error else { Issue.record("got \(error)"); return }
        #expect(codec == "H264")
        #expect(error.description.contains("H264") && error.description.contains("webm"))
    }

    @Test func mp4RefusesVP8NamingIt() throws {
        let error = try #require(throws: RecordingError.self) {
            _ = try CallRecorder(url: temporaryFile("vp8.mp4"), format: .mp4, tracks: [RecordedTrack(.localVideo, codec: .vp8)])
        }
        guard case .unsupportedCodec(let codec, .mp4?, _) = error else { Issue.record("got \(error)"); return }
        #expect(codec == "VP8")
        #expect(error.description.contains("VP8") && error.description.contains("mp4mux"))
    }

    @Test func unknownCodecsAreNamed() throws {
        let error = try #require(throws: RecordingError.self) { try RecordedCodec.parse(encodingName: "AV1") }
        #expect(error.description.contains("AV1"))
    }

    private func recordTwoSeconds(codec: RecordedCodec, format: RecordingFormat) async throws -> RecordedFileInfo {
        let call = try await FakeCall(video: codec)
        defer { call.stop() }
        let url = temporaryFile("formats.\(format.fileExtension)")
        let recorder = try CallRecorder(url: url, format: format,
                                        tracks: [RecordedTrack(.localVideo, codec: codec), RecordedTrack(.localAudio, codec: .opus)])
        try await recorder.start()
        try recorder.attach(.localVideo, to: call.videoTee)
        try recorder.attach(.localAudio, to: call.audioTee)
        try await waitForTracks(recorder, count: 2)
        try await Task.sleep(for: .seconds(2))
        let summary = try await recorder.stop()
        #expect(summary.tracks == [.localVideo, .localAudio])
        let header = try FileHandle(forReadingFrom: url).readData(ofLength: 64)
        switch format {
        case .webm: #expect(header.range(of: Data("webm".utf8)) != nil, "DocType webm")
        case .matroska: #expect(header.range(of: Data("matroska".utf8)) != nil)
        case .mp4: #expect(header.range(of: Data("ftyp".utf8)) != nil)
        }
        return try await RecordingInspector.inspect(url)
    }
}

/// Bad input gets a clear error naming the problem.
@Suite(.serialized) struct RecordingErrorTests {
    let tracks = [RecordedTrack(.localAudio, codec: .opus)]

    @Test func unwritablePathsAreRefusedAtOnce() throws {
        let missing = URL(fileURLWithPath: "/nonexistent-\(UUID().uuidString)/call.mkv")
        let error = try #require(throws: RecordingError.self) { _ = try CallRecorder(url: missing, tracks: tracks) }
        guard case .cannotWrite(let path, let reason) = error else { Issue.record("got \(error)"); return }
        #expect(path == missing.path && reason.contains("does not exist"))

        let directory = URL(fileURLWithPath: NSTemporaryDirectory())
        let isDirectory = try #require(throws: RecordingError.self) { _ = try CallRecorder(url: directory, tracks: tracks) }
        #expect(isDirectory.description.contains("directory"))

        let proc = URL(fileURLWithPath: "/proc/ecv-cannot-create-this.mkv")
        let denied = try #require(throws: RecordingError.self) { _ = try CallRecorder(url: proc, tracks: tracks) }
        guard case .cannotWrite = denied else { Issue.record("got \(denied)"); return }
    }

    @Test func oneFileTakesOneRecording() async throws {
        let url = temporaryFile("twice.mkv")
        let first = try CallRecorder(url: url, tracks: tracks)
        let error = try #require(throws: RecordingError.self) { _ = try CallRecorder(url: url, tracks: tracks) }
        #expect(error == .alreadyRecording(path: url.standardizedFileURL.path))
        try await first.start()
        _ = try await first.stop()
        // Once the first one is done, the file exists and is only overwritten when asked.
        let exists = try #require(throws: RecordingError.self) { _ = try CallRecorder(url: url, tracks: tracks) }
        #expect(exists == .fileExists(path: url.standardizedFileURL.path))
        _ = try CallRecorder(url: url, tracks: tracks, options: RecordingOptions(replaceExisting: true))
    }

    @Test func stoppingTwiceAndOutOfOrderCallsThrow() async throws {
        let call = try await FakeCall()
        defer { call.stop() }
        let recorder = try CallRecorder(url: temporaryFile("order.mkv"), tracks: tracks)
        await #expect(throws: RecordingError.notStarted) { try await recorder.stop() }
        #expect(throws: RecordingError.notStarted) { try recorder.mark("early") }
        try await recorder.start()
        await #expect(throws: RecordingError.alreadyStarted) { try await recorder.start() }
        #expect(throws: RecordingError.self) { try recorder.attach(.localVideo, to: call.videoTee) }
        try recorder.attach(.localAudio, to: call.audioTee)
        _ = try await recorder.stop()
        await #expect(throws: RecordingError.alreadyStopped) { try await recorder.stop() }
        #expect(throws: RecordingError.alreadyStopped) { try recorder.attach(.localAudio, to: call.audioTee) }
    }

    @Test func declaringTracksWrongIsRefused() throws {
        #expect(throws: RecordingError.self) {
            _ = try CallRecorder(url: temporaryFile("dup.mkv"), tracks: [RecordedTrack(.localAudio, codec: .opus), RecordedTrack(.localAudio, codec: .opus)])
        }
        #expect(throws: RecordingError.self) {
            _ = try CallRecorder(url: temporaryFile("kind.mkv"), tracks: [RecordedTrack(.localAudio, codec: .vp8)])
        }
        #expect(throws: RecordingError.self) { _ = try CallRecorder(url: temporaryFile("none.mkv"), tracks: []) }
    }

    @Test func aStreamOfAnotherCodecIsNotAttached() async throws {
        let call = try await FakeCall(video: .vp8)
        defer { call.stop() }
        try await Task.sleep(for: .milliseconds(300))
        let recorder = try CallRecorder(url: temporaryFile("mismatch.mkv"), tracks: [RecordedTrack(.localVideo, codec: .h264)])
        try await recorder.start()
        let error = try #require(throws: RecordingError.self) { try recorder.attach(.localVideo, to: call.videoTee) }
        #expect(error == .trackMismatch(role: .localVideo, expected: "H264", got: "VP8"))
        _ = try? await recorder.stop()
    }
}
