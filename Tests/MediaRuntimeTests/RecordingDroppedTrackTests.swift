import ECVRecording
import Foundation
import GLibCore
import GStreamer
import MediaPipeline
@testable import MediaRuntime
import MediaTestSupport
import Testing

/// A declared track that never gets a key frame is left out of the file, at the start timeout and
/// at stop, while its packets keep coming; the file is finished with the tracks that had data.
///
/// Its packets keep flowing into the track until the track is taken out. A frame let into the
/// muxer then would wait there for the other tracks (which have stopped) while the track's
/// elements were being stopped, and the stop could never return; so the track is closed to the
/// muxer before it is taken out (`RecorderTrack.retireIfIdle`). Each case runs a few times, with
/// the track's input slowed so it still holds packets at the removal, to give that race room; the
/// old order did not hang here on demand (the window is a few microseconds), so these tests
/// guard the dropping itself: the reason, the event, a file with the other tracks only.
@Suite(.serialized) struct RecordingDroppedTrackTests {
    @Test(arguments: 1...3) func aTrackWithoutKeyFrameIsLeftOutAtStop(run: Int) async throws {
        let source = try await KeyFramelessSource()
        defer { source.stop() }
        let url = temporaryFile("dropped-at-stop-\(run).mkv")
        let recorder = try CallRecorder(url: url, tracks: [RecordedTrack(.localAudio, codec: .opus), RecordedTrack(.remoteVideo, codec: .vp8)])
        let events = Events(recorder.events())
        try await recorder.start()
        try recorder.attach(.localAudio, to: source.audioTee)
        try await waitForTracks(recorder, count: 1)
        try recorder.attach(.remoteVideo, to: source.videoTee)
        let slowed = try slowDownTrackInput(.remoteVideo, of: recorder)
        defer { slowed.cancel() }
        try await source.waitForVideoPackets(200)
        let summary = try await stopWithin(.seconds(30), recorder)

        #expect(summary.droppedTracks[.remoteVideo] == "no data before the recording stopped")
        #expect(summary.tracks == [.localAudio])
        try await events.waitFor("the video track's drop reported", within: .seconds(5)) {
            $0 == .trackDropped(.remoteVideo, reason: "no data before the recording stopped")
        }
        let info = try await RecordingInspector.inspect(url)
        #expect(info.videoTracks.isEmpty)
        let audio = try #require(info.audioTracks.first)
        // Opus in 20 ms frames: 50 a second from the audio's start to the stop.
        #expect(Double(audio.frames) >= 0.8 * 50 * summary.duration.seconds - 10, "\(audio.frames) frames in \(summary.duration)")
    }

    @Test(arguments: 1...2) func aTrackWithoutKeyFrameIsLeftOutAtTheStartTimeout(run: Int) async throws {
        let source = try await KeyFramelessSource()
        defer { source.stop() }
        let url = temporaryFile("dropped-on-timeout-\(run).mkv")
        let recorder = try CallRecorder(url: url, tracks: [RecordedTrack(.localAudio, codec: .opus), RecordedTrack(.remoteVideo, codec: .vp8)],
                                        options: RecordingOptions(trackStartTimeout: .seconds(1)))
        let events = Events(recorder.events())
        try await recorder.start()
        try recorder.attach(.localAudio, to: source.audioTee)
        try recorder.attach(.remoteVideo, to: source.videoTee)
        let slowed = try slowDownTrackInput(.remoteVideo, of: recorder)
        defer { slowed.cancel() }
        try await events.waitFor("the video track dropped", within: .seconds(10)) {
            if case .trackDropped(.remoteVideo, let reason) = $0 { reason.hasPrefix("no data within") } else { false }
        }
        // The audio goes on being written after the video is gone.
        let droppedAt = recorder.mediaTime
        try await source.waitForVideoPackets(source.videoPackets + 200)
        try await eventually(.seconds(10), "a second of media time after the drop") { recorder.mediaTime >= droppedAt + .seconds(1) }
        let summary = try await stopWithin(.seconds(30), recorder)

        #expect(summary.droppedTracks[.remoteVideo]?.hasPrefix("no data within") == true)
        #expect(summary.tracks == [.localAudio])
        let info = try await RecordingInspector.inspect(url)
        #expect(info.videoTracks.isEmpty)
        let audio = try #require(info.audioTracks.first)
        #expect((audio.lastTime ?? 0) > droppedAt.seconds + 0.5, "the audio ends at \(audio.lastTime ?? 0) s, the video was dropped at \(droppedAt)")
    }
}

/// Makes the thread that takes `role`'s packets out of its input slower than they come (a loaded
/// machine's), so the input still holds packets when the track is taken out.
private func slowDownTrackInput(_ role: TrackRole, of recorder: CallRecorder) throws -> PadProbe {
    let track = try #require(recorder.state.withLock { $0.recorderTracks[role] })
    let output = try #require(track.source.staticPad("src"))
    return output.addBufferProbe { _, _ in
        usleep(4_000)
        return .pass
    }
}

/// `recorder.stop()`, failing the test instead of hanging it when the stop never returns.
private func stopWithin(_ timeout: Duration, _ recorder: CallRecorder) async throws -> RecordingSummary {
    let returned = Locked(false)
    let stopping = Task {
        defer { returned.withLock { $0 = true } }
        return try await recorder.stop()
    }
    try await eventually(timeout, "the recorder's stop returned") { returned.value }
    return try await stopping.value
}

/// Opus audio, and VP8 video that has one key frame only: the video reaches its tee over loopback
/// UDP, so a key-frame request from the recorder ends at the `udpsrc` and never reaches the
/// encoder. The video is noise, so it is sent at a high rate (hundreds of packets a second).
private final class KeyFramelessSource: Sendable {
    let receiver: Pipeline
    let sender: Pipeline
    let videoTee: Element
    let audioTee: Element
    private let packets = Locked(0)
    private let counter: PadProbe

    init() async throws {
        _ = TestRuntime.ready
        receiver = try Pipeline(launch: """
            udpsrc name=udp address=127.0.0.1 port=0 caps="application/x-rtp,media=video,encoding-name=VP8,clock-rate=90000,payload=96" ! \
            tee name=vtee allow-not-linked=true ! queue ! fakesink sync=false async=false \
            audiotestsrc is-live=true ! audio/x-raw,rate=48000,channels=1 ! opusenc ! rtpopuspay ! \
            tee name=atee allow-not-linked=true ! queue ! fakesink sync=false
            """)
        videoTee = try #require(receiver.element(named: "vtee"))
        audioTee = try #require(receiver.element(named: "atee"))
        let packets = packets
        counter = try #require(videoTee.staticPad("sink")).addBufferProbe { _, _ in packets.withLock { $0 += 1 }; return .pass }
        try await receiver.play()
        let udp = try #require(receiver.element(named: "udp"))
        let port = try #require(try udp.get("port").intValue)
        #expect(port > 0)
        sender = try Pipeline(launch: """
            videotestsrc is-live=true pattern=snow ! video/x-raw,width=320,height=240,framerate=30/1 ! \
            vp8enc deadline=1 keyframe-max-dist=1000000 target-bitrate=4000000 ! rtpvp8pay mtu=1200 ! \
            udpsink host=127.0.0.1 port=\(port) sync=false
            """)
        try await sender.play()
    }

    var videoPackets: Int { packets.value }

    func waitForVideoPackets(_ count: Int) async throws {
        try await eventually(.seconds(15), "\(count) video packets at the tee") { self.videoPackets >= count }
    }

    func stop() {
        counter.cancel()
        sender.stop()
        receiver.stop()
    }
}

/// Every event a recorder reported so far, collected as they come.
private final class Events: Sendable {
    private let collected = Locked<[RecordingEvent]>([])
    private let task: Task<Void, Never>

    init(_ stream: AsyncStream<RecordingEvent>) {
        let collected = collected
        task = Task { for await event in stream { collected.withLock { $0.append(event) } } }
    }

    deinit { task.cancel() }

    var seen: [RecordingEvent] { collected.value }

    func waitFor(_ what: String, within timeout: Duration, _ matches: @escaping @Sendable (RecordingEvent) -> Bool) async throws {
        try await eventually(timeout, what) { self.seen.contains(where: matches) }
    }
}
