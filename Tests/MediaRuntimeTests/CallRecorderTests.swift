import ECVRecording
import Foundation
import GStreamer
import MediaPipeline
@testable import MediaRuntime
import Testing

@Suite(.serialized) struct CallRecorderTests {
    @Test func recordsLocalTracksOfARunningPipeline() async throws {
        let call = try await FakeCall()
        let url = temporaryFile("local.mkv")
        let recorder = try CallRecorder(url: url, tracks: [RecordedTrack(.localVideo, codec: .vp8), RecordedTrack(.localAudio, codec: .opus)],
                                        labels: RecordingLabels(local: "agent", remote: "caller"))
        try await recorder.start()
        try recorder.attach(.localVideo, to: call.videoTee)
        try recorder.attach(.localAudio, to: call.audioTee)
        try await waitForTracks(recorder, count: 2)
        try await Task.sleep(for: .seconds(3))
        let summary = try await recorder.stop()
        let info = try await RecordingInspector.inspect(url)
        print(info)
        print(summary)
        #expect(info.videoTracks.count == 1)
        #expect(info.audioTracks.count == 1)
        call.stop()
    }
}
