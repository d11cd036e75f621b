import ECVRecording
import Foundation
import GLibCore
import GStreamer
import MediaPipeline
@testable import MediaRuntime
import MediaTestSupport
import Testing

/// The composite keeps running when a side has no video: the canvas stays black, the inset shows.
@Suite(.serialized) struct CompositeRecorderTests {
    @Test func aMissingRemotePictureLeavesTheCanvasBlackAndTheInsetShows() async throws {
        let call = try await FakeCall(pattern: "blue")
        defer { call.stop() }
        let url = temporaryFile("composite-one-sided.webm")
        let layout = CompositeLayout(width: 320, height: 240)
        let recorder = try CompositeRecorder(url: url, tracks: [RecordedTrack(.remoteVideo, codec: .vp8), RecordedTrack(.localVideo, codec: .vp8),
                                                                RecordedTrack(.localAudio, codec: .opus)], layout: layout)
        try await recorder.start()
        try recorder.attach(.localVideo, to: call.videoTee)
        try recorder.attach(.localAudio, to: call.audioTee)
        try await Task.sleep(for: .seconds(3))
        _ = try await recorder.stop()
        let info = try await RecordingInspector.inspect(url)
        #expect(info.videoTracks.count == 1 && info.audioTracks.count == 1)
        let frame = try await frame(of: url, at: 2.0)
        #expect(frame.width == 320 && frame.height == 240)
        let inset = layout.insetFrame
        let canvas = meanColor(frame, x: 40, y: 40, width: 80, height: 60)
        let corner = meanColor(frame, x: inset.x + 8, y: inset.y + 8, width: inset.width - 16, height: inset.height - 16)
        #expect(canvas.red < 40 && canvas.green < 40 && canvas.blue < 40, "no remote picture: black canvas, got \(canvas)")
        #expect(corner.blue > 180 && corner.red < 80, "the local (blue) inset, got \(corner)")
    }

    @Test func mp4CannotHoldTheCompositeAndSaysWhy() throws {
        let error = try #require(throws: RecordingError.self) {
            _ = try CompositeRecorder(url: temporaryFile("composite.mp4"), format: .mp4, tracks: [RecordedTrack(.localVideo, codec: .h264)])
        }
        #expect(error.description.contains("VP8"))
    }
}

/// The first decoded frame of a WebM file at or after `time` seconds (else its last one).
func frame(of url: URL, at time: Double) async throws -> VideoFrame {
    let pipeline = try Pipeline(launch: "filesrc location=\(url.path) ! matroskademux ! vp8dec ! videoconvert ! video/x-raw,format=RGBA ! appsink name=sink sync=false")
    let sink = try AppSink(try #require(pipeline.element(named: "sink")))
    let last = Locked<VideoFrame?>(nil)
    sink.setSampleHandler { sample in
        last.withLock { last in
            if let kept = last?.pts, Double(kept) / 1e9 >= time { return }
            last = sample.videoFrame()
        }
    }
    try await pipeline.play()
    try await pipeline.waitForEndOfStream()
    pipeline.stop()
    return try #require(last.value)
}
