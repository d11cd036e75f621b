import GStreamer
import MediaPipeline
import MediaRuntime
import MediaTestSupport
import Testing
@testable import WebRTC

@Suite struct FrozenPictureWatchTests {
    @Test func asksWhileBytesArriveAndNothingDecodes() {
        var watch = FrozenPictureWatch()
        let readings: [(bytes: UInt64, pictures: Int, asks: Bool)] = [
            (1_000, 0, false), // the first check only takes a reading
            (2_000, 0, true), // bytes came, no picture: ask
            (3_000, 0, true), // still frozen: ask again
            (4_000, 5, false), // pictures again
            (4_000, 5, false), // nothing arrives: nothing to decode
            (5_000, 5, true),
        ]
        for (index, reading) in readings.enumerated() {
            let asks = watch.update(videoBytesReceived: reading.bytes, picturesDecoded: reading.pictures)
            #expect(asks == reading.asks, "check \(index)")
        }
        #expect(watch.requests == 3)
    }
}

/// A far-end H.264 picture frozen because its key frame request never reached the sender: the
/// receiver asks again. (rtph264depay asks once per gap and then drops everything until a key
/// frame; rtpvp8depay asks for every frame it drops, so VP8 does not need the watch.)
@Suite(.serialized) struct FrozenPictureRecoveryTests {
    @Test func aFrozenH264PictureMakesTheReceiverAskAgain() async throws {
        let pair = PeerPair(offerer: testMedia(codec: "H264"), answerer: testMedia(codec: "H264"))
        let atAnswerer = RemoteMedia(pair.answerer)
        try await pair.start()
        try await waitFor(.connected, on: pair.answerer)
        // Past the start's key frames (0, 0.4 and 1.5 s after connecting).
        try await eventually(.seconds(10), "frames at the answerer") { atAnswerer.video.count > 60 }

        // The receiver's own one-shot requests are lost: the depayloader and the decoder ask nothing.
        let branch = try #require(await pair.answerer.session?.incomingBranches.first { $0.fragment.kind == .video })
        let depayloader = try #require(branch.fragment.nodes.first { $0.role == .depayloader }.flatMap { branch.elements.elements[$0.id] })
        let decoder = try #require(branch.fragment.nodes.first { $0.role == .decoder }.flatMap { branch.elements.elements[$0.id] })
        try depayloader.set("request-keyframe", false)
        try decoder.set("automatic-request-sync-points", false)

        // 40 RTP packets vanish behind the jitter buffer: the depayloader sees the gap and drops
        // everything until a key frame (`wait-for-keyframe`), so the picture freezes until the
        // sender's next scheduled key frame (2 s for ECVKit, none at all for a browser's H.264)
        // unless the receiver asks.
        let requestsBefore = await pair.answerer.pictureWatch.requests
        let dropped = Counter()
        let input = try #require(depayloader.staticPad("sink"))
        let gap = input.addBufferProbe { _, _ in
            guard dropped.count < 40 else { return .pass }
            dropped.increment()
            return .drop
        }
        try await eventually(.seconds(5), "40 packets dropped") { dropped.count == 40 }
        let atGapEnd = atAnswerer.video.count

        try await eventually(.seconds(10), "H.264 pictures after the gap (\(atGapEnd) at its end)") { atAnswerer.video.count > atGapEnd + 30 }
        #expect(await pair.answerer.pictureWatch.requests > requestsBefore, "the receiver asked again while the picture was frozen")
        gap.cancel()
        await pair.close()
    }
}
