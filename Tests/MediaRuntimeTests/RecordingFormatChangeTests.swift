import ECVRecording
import Foundation
import GLibCore
import GStreamer
import MediaPipeline
@testable import MediaRuntime
import Testing

/// A sender that changes its picture size mid-call (a browser short of CPU or bandwidth; the
/// H.264 parameter sets libwebrtc resends after a key-frame request) must not end the file: the
/// muxers refuse new caps, so the track keeps its first format and the stream carries the new one.
@Suite(.serialized) struct RecordingFormatChangeTests {
    @Test(arguments: [(RecordedCodec.vp8, "vp8dec"), (.h264, "avdec_h264")])
    func pictureSizeChangeKeepsRecordingAndDecodes(codec: RecordedCodec, decoder: String) async throws {
        let call = try await FakeCall(video: codec, width: 320, height: 240)
        defer { call.stop() }
        let url = temporaryFile("resize-\(codec.rawValue).mkv")
        let recorder = try CallRecorder(url: url, tracks: [RecordedTrack(.remoteVideo, codec: codec)])
        let events = recorder.events()
        try await recorder.start()
        try recorder.attach(.remoteVideo, to: call.videoTee)
        try await waitForTracks(recorder, count: 1)
        try await Task.sleep(for: .seconds(1.5))  // media time at the first size
        try call.resize(width: 160, height: 120)
        let changed = try await firstFormatChange(in: events, within: .seconds(10))
        #expect(changed.role == .remoteVideo)
        #expect(changed.format.hasSuffix("160x120"), "reported \(changed.format)")
        try await Task.sleep(for: .seconds(1.5))  // media time at the second size
        let summary = try await recorder.stop()
        #expect(summary.droppedTracks.isEmpty)

        // The file holds both sizes, and a decoder gives pictures of the second size at the end.
        let info = try await RecordingInspector.inspect(url)
        let track = try #require(info.videoTracks.first)
        #expect(Double(track.frames) >= 0.8 * 30 * summary.duration.seconds, "\(track.frames) frames in \(summary.duration)")
        #expect((track.lastTime ?? 0) > summary.duration.seconds - 0.5, "the track ends at \(track.lastTime ?? 0) s")
        #expect(info.textTracks.flatMap(\.texts).contains { $0.text.contains("160x120") }, "a marker says where the size changed")
        let sizes = try await decodedSizes(of: url, decoder: decoder)
        #expect(sizes.first == "320x240")
        #expect(sizes.last == "160x120", "decoded sizes \(sizes)")
    }

    private func firstFormatChange(in events: AsyncStream<RecordingEvent>, within timeout: Duration) async throws
        -> (role: TrackRole, format: String) {
        try await withThrowingTaskGroup(of: (TrackRole, String)?.self) { group in
            group.addTask {
                for await event in events { if case .formatChanged(let role, let format) = event { return (role, format) } }
                return nil
            }
            group.addTask {
                try await Task.sleep(for: timeout)
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let change = first else {
                throw TestFailure("no format change reported within \(timeout)")
            }
            return change
        }
    }

    /// Decodes the file's video and lists each picture size in the order it appeared.
    private func decodedSizes(of url: URL, decoder: String) async throws -> [String] {
        let pipeline = try Pipeline(launch: "filesrc location=\(url.path) ! matroskademux ! \(decoder) name=decoder ! fakesink sync=false")
        let decoded = try #require(pipeline.element(named: "decoder")?.staticPad("src"))
        let sizes = Locked<[String]>([])
        let probe = decoded.addBufferProbe { _, _ in
            if let structure = decoded.currentCaps?.structures.first, let width = structure.int("width"), let height = structure.int("height") {
                let size = "\(width)x\(height)"
                sizes.withLock { if $0.last != size { $0.append(size) } }
            }
            return .pass
        }
        defer { probe.cancel() }
        try await pipeline.play()
        try await pipeline.waitForEndOfStream()
        pipeline.stop()
        return sizes.value
    }
}
