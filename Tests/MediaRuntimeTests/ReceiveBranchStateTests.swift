import Foundation
import GStreamer
import MediaPipeline
import MediaRuntime
import MediaTestSupport
import Testing

/// Receive branches join a call's pipeline while it plays, one per stream webrtcbin exposes, and
/// leave it while the far end may still be sending.
@Suite struct ReceiveBranchStateTests {
    init() throws { try GStreamerRuntime.ensureInitialized() }

    /// A video stream whose branch exists but whose first picture has not come (the depayloader
    /// waits for a key frame) must not hold up an audio stream that flows. An asynchronous sink
    /// made the playing pipeline lose its state when the video branch joined, so the audio
    /// branch's sink joined in PAUSED, took its first packet and then held the audio stream's
    /// thread (webrtcbin's jitter buffer, and every tap on the stream) until a video picture came.
    @Test func aBranchWaitingForItsFirstPictureDoesNotHoldAnotherStream() async throws {
        let call = try CallLikePipeline()
        let video = try call.attach(.video, encoding: "VP8", from: call.silentVideo)
        let audio = try call.attach(.audio, encoding: "OPUS", from: call.audioTee.requestPad("src_%u"))
        let arrivals = SinkArrivals(audio)
        await #expect(throws: Never.self) {
            try await eventually(.seconds(5), "audio packets past the first at the audio sink (\(arrivals.count))") { arrivals.count > 10 }
        }
        #expect(call.pipeline.currentState == .playing)
        try await call.close(removing: [audio, video])
    }

    /// Taking a branch away while its sink holds the streaming thread (in preroll, as above, or
    /// while it waits on the clock) must not wait for that thread: the sink goes first and lets
    /// it go. Taking the depayloader first waited for its stream lock, held by the very thread
    /// blocked in the sink, and the call's teardown hung.
    @Test func removingABranchWhoseSinkHoldsTheStreamDoesNotHang() async throws {
        let call = try CallLikePipeline()
        let audio = try call.attach(.audio, encoding: "OPUS", from: call.audioTee.requestPad("src_%u"))
        let sink = try #require(audio.sink)
        // A sink kept in PAUSED takes one packet and then holds the thread that brought it.
        sink.setLockedState(true)
        _ = sink.requestState(.paused)
        let arrivals = SinkArrivals(audio)
        try await eventually(.seconds(5), "the paused sink's preroll packet") { arrivals.count >= 1 }
        try await call.close(removing: [audio])
    }
}

/// A playing live pipeline shaped like a call's receive side: a live Opus RTP stream behind an
/// allow-not-linked tee (webrtcbin's audio pad) and a live VP8 RTP source that sends nothing yet
/// (a video pad whose first key frame has not come).
private struct CallLikePipeline {
    let pipeline: Pipeline
    let audioTee: Element
    let silentVideo: Pad

    init() throws {
        pipeline = try Pipeline(launch: """
            audiotestsrc is-live=true ! opusenc ! rtpopuspay ! tee name=audio_rtp allow-not-linked=true \
            appsrc name=video_rtp is-live=true format=time caps=application/x-rtp,media=video,encoding-name=VP8,clock-rate=90000,payload=96
            """)
        audioTee = try #require(pipeline.element(named: "audio_rtp"))
        silentVideo = try #require(pipeline.element(named: "video_rtp")?.staticPad("src"))
        _ = pipeline.requestState(.playing)
    }

    func attach(_ kind: MediaKind, encoding: String, from pad: Pad) throws -> ReceiveMedia {
        let fragment = try PipelineCompiler(catalog: LiveCatalog.shared)
            .compileReceive(kind: kind, encodingName: encoding, sink: .discard, parameters: MediaParameters())
        return try ReceiveMedia(fragment: fragment, into: pipeline, from: pad, send: nil)
    }

    /// Removes `branches` and stops the pipeline, on a thread of its own so a removal that hangs
    /// fails the test instead of the suite; the pipeline is then left as it is.
    func close(removing branches: [ReceiveMedia]) async throws {
        let removed = Counter()
        Thread.detachNewThread { [pipeline] in
            for branch in branches { branch.elements.remove(from: pipeline) }
            removed.increment()
        }
        try await eventually(.seconds(5), "the branches removed") { removed.count == 1 }
        pipeline.stop()
    }
}

/// Counts the buffers reaching a branch's sink.
private final class SinkArrivals: Sendable {
    private let counter = Counter()
    private let probe: PadProbe?

    init(_ branch: ReceiveMedia) {
        probe = branch.sink?.staticPad("sink")?.addBufferProbe { [counter] _, _ in counter.increment(); return .pass }
    }

    deinit { probe?.cancel() }

    var count: Int { counter.count }
}

private extension ReceiveMedia {
    /// The branch's sink (a `.discard` branch has one).
    var sink: Element? { elements.elements.values.first { $0.isA("GstBaseSink") } }
}
