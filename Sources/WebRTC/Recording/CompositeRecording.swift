import Foundation
import GLibCore
import GStreamer
import MediaPipeline
import MediaRuntime

extension PeerConnection {
    /// Records this call as one re-encoded picture (the remote party full-frame, our picture
    /// inset) with both parties' sound mixed, VP8 and Opus in WebM (or Matroska). Without a
    /// `layout`, the streams size it (`streamSizedLayout`).
    package func startCompositeRecording(to url: URL, format: RecordingFormat = .webm, layout: CompositeLayout? = nil,
                                        options: RecordingOptions = RecordingOptions()) async throws(RecordingError) -> CompositeRecording {
        guard !isClosed, mediaPipeline != nil else { throw .pipeline("the peer connection is not running (start it first)") }
        let canvas: CompositeLayout
        if let layout { canvas = layout } else { canvas = await streamSizedLayout() }
        guard !isClosed else { throw .pipeline("the peer connection closed") }
        let recorder = try CompositeRecorder(url: url, format: format, tracks: try recordedTracks(), layout: canvas, options: options)
        let events = events()
        try await recorder.start()
        let recording = CompositeRecording(recorder: recorder)
        // Attaching failed: this throws that error; the recorder stops and releases its file,
        // whose own stop error adds nothing to it.
        try await attachCurrentStreams(to: recording.follower) { _ = try? await recorder.stop() }
        recording.follow(events)
        return recording
    }
}

extension PeerConnection {
    /// How long a composite waits for the far end's first key frame to learn its picture size.
    static let remoteSizeWait: Duration = .seconds(2)

    /// The composite layout the call's streams call for: the canvas is the far end's picture size
    /// as received (waiting up to `remoteSizeWait` for its first key frame), the inset has our
    /// own picture's shape as sent. The configured size stands in only for a side that has not
    /// shown a picture (an audio-only far end, or none within the wait).
    func streamSizedLayout() async -> CompositeLayout {
        let parameters = configuration.media.parameters
        let deadline = ContinuousClock.now + Self.remoteSizeWait
        var remote = remoteVideoSize
        while remote == nil, parameters.videoCallEnabled, !isClosed, ContinuousClock.now < deadline {
            do { try await Task.sleep(for: .milliseconds(20)) } catch { break }
            remote = remoteVideoSize
        }
        let configured = PictureSize(width: parameters.videoWidth > 0 ? parameters.videoWidth : 640,
                                     height: parameters.videoHeight > 0 ? parameters.videoHeight : 480)
        let local = localVideoSize
        let layout = CompositeLayout(framesPerSecond: parameters.videoFps > 0 ? parameters.videoFps : 30,
                                     insetAspectRatio: local.map { Double($0.width) / Double($0.height) })
        return layout.fitting(canvas: remote ?? local ?? configured)
    }
}

/// A running composite recording of a peer connection's call, kept fed across rebuilds.
package final class CompositeRecording: Sendable {
    package let recorder: CompositeRecorder
    let follower: StreamFollower
    private let task = Locked<Task<Void, Never>?>(nil)

    init(recorder: CompositeRecorder) {
        self.recorder = recorder
        follower = StreamFollower(target: recorder)
    }

    deinit { task.value?.cancel() }

    package var url: URL { recorder.url }
    package var problems: [String] { follower.problems }

    func follow(_ events: AsyncStream<PeerEvent>) { task.withLock { $0 = follower.follow(events) } }

    /// Stops following the call and finalises the file; the call goes on.
    @discardableResult
    package func stop() async throws(RecordingError) -> RecordingSummary {
        task.withLock { task in task?.cancel(); task = nil }
        return try await recorder.stop()
    }
}
