import GStreamer
import MediaTestSupport
import Testing
@testable import WebRTC

/// A key-frame request (a recorder attaching, a decoder after a gap) leaves in an RTCP packet, and
/// at the calm report pace it waited up to half a second for one: the receiver speeds RTCP up
/// while it waits (`LossResponse.keyFrameWanted`), then calms down again.
@Suite(.serialized) struct KeyFrameRequestFeedbackTests {
    @Test func aKeyFrameRequestSpeedsRTCPUpForAWhile() async throws {
        let (pair, _, session) = try await flowingPair()
        let calm = Duration.milliseconds(100) // PeerConfiguration's default rtcpMinInterval
        try await eventually(.seconds(10), "RTCP at the calm pace") { session.rtcpMinInterval == calm }

        let video = try #require(await pair.answerer.currentRemoteRTPTees().first { $0.kind == .video })
        let input = try #require(video.tee.staticPad("sink"))
        #expect(input.requestKeyFrame(allHeaders: true))
        try await eventually(.seconds(2), "RTCP quick after the request") {
            session.rtcpMinInterval == LossResponse.lossyRTCPMinInterval
        }
        // The hurry lasts 2 s from the request; the next liveness tick after it restores the pace.
        try await eventually(.seconds(6), "RTCP calm again") { session.rtcpMinInterval == calm }
        await pair.close()
    }
}
