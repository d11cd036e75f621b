import Foundation
import GStreamer
import MediaPipeline
import MediaRuntime

extension PeerConnection {
    /// Records this call as one re-encoded picture (the remote party full-frame, our picture
    /// inset) with both parties' sound mixed, VP8 and Opus in WebM (or Matroska). The canvas
    /// defaults to the call's configured video size.
    public func startCompositeRecording(to url: URL, format: RecordingFormat = .webm, layout: CompositeLayout? = nil,
                                        options: RecordingOptions = RecordingOptions()) async throws(RecordingError) -> CompositeRecording {
        guard !isClosed, mediaPipeline != nil else { throw .pipeline("the peer connection is not running (start it first)") }
        let parameters = configuration.media.parameters
        let canvas = layout ?? CompositeLayout(width: parameters.videoWidth > 0 ? parameters.videoWidth & ~1 : 640,
                                               height: parameters.videoHeight > 0 ? parameters.videoHeight & ~1 : 480,
                                               framesPerSecond: parameters.videoFps > 0 ? parameters.videoFps : 30)
        let recorder = try CompositeRecorder(url: url, format: format, tracks: try recordedTracks(), layout: canvas, options: options)
        let events = events()
        try await recorder.start()
        let recording = CompositeRecording(recorder: recorder)
        try await attachCurrentStreams(to: recording.follower) { _ = try? await recorder.stop() }
        recording.follow(events)
        return recording
    }
}

/// A running composite recording of a peer connection's call, kept fed across rebuilds.
public final class CompositeRecording: Sendable {
    public let recorder: CompositeRecorder
    let follower: StreamFollower
    private let task = Locked<Task<Void, Never>?>(nil)

    init(recorder: CompositeRecorder) {
        self.recorder = recorder
        follower = StreamFollower(target: recorder)
    }

    deinit { task.value?.cancel() }

    public var url: URL { recorder.url }
    public var problems: [String] { follower.problems }

    func follow(_ events: AsyncStream<PeerEvent>) { task.value = follower.follow(events) }

    /// Stops following the call and finalises the file; the call goes on.
    @discardableResult
    public func stop() async throws(RecordingError) -> RecordingSummary {
        task.withLock { task in task?.cancel(); task = nil }
        return try await recorder.stop()
    }
}
