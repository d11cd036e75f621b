import Foundation
import GLibCore
import GStreamer
import MediaPipeline
@testable import MediaRuntime
import Testing

/// A recorder leaves nothing behind: not in the call's pipeline, not in the process.
@Suite(.serialized) struct RecordingLeakTests {
    @Test func startStopTenTimesLeavesNoSurvivors() async throws {
        let call = try await FakeCall()
        defer { call.stop() }
        let elementsBefore = call.elementCount
        try await recordBriefly(call) // warms plugin and type caches
        let tracking = try #require(LeakTracer.startTracking(), "the leaks tracer must be active and no other tracking run (tests that track need --no-parallel)")
        for _ in 0..<Self.cycles {
            try await recordBriefly(call)
            #expect(call.elementCount == elementsBefore, "the recorder's queue and appsink left the call's pipeline")
        }
        var recorderObjects: [String: Int] = [:], repeated: [String: Int] = [:]
        for _ in 0..<40 {
            await MainLoop.shared.run { () }
            try await Task.sleep(for: .milliseconds(50))
            let survivors = tracking.survivors()
            recorderObjects = survivors.filter { Self.recorderTypes.contains($0.key) }
            repeated = survivors.filter { $0.value >= Self.cycles }
            if recorderObjects.isEmpty && repeated.isEmpty { break }
        }
        #expect(recorderObjects.isEmpty, "recorder elements left alive: \(recorderObjects)")
        #expect(repeated.isEmpty, "objects every recording left behind: \(repeated)")
    }

    static let cycles = 10

    /// The elements a recording creates (in the call's pipeline and its own): none may survive.
    static let recorderTypes: Set<String> = ["GstQueue", "GstAppSink", "GstAppSrc", "GstMatroskaMux", "GstFileSink", "GstPipeline",
                                             "GstTagInject", "GstRtpVP8Depay", "GstRtpOpusDepay", "GstBus"]
    // The fake call keeps running while we count: its buffers, events and queries in flight, and
    // the buffer pool its encoder renegotiates when a tee gains a branch, are its own. Whatever a
    // recording leaked, every one of the cycles would leave it: `cycles` or more of one type.

    private func recordBriefly(_ call: FakeCall) async throws {
        let recorder = try CallRecorder(url: temporaryFile("leaks.mkv"),
                                        tracks: [RecordedTrack(.localVideo, codec: .vp8), RecordedTrack(.localAudio, codec: .opus)])
        try await recorder.start()
        try recorder.attach(.localVideo, to: call.videoTee)
        try recorder.attach(.localAudio, to: call.audioTee)
        try await waitForTracks(recorder, count: 2)
        try await Task.sleep(for: .milliseconds(300))
        _ = try await recorder.stop()
    }
}
