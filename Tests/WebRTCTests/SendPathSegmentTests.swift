import GStreamer
import MediaTestSupport
import Testing
@testable import WebRTC

/// webrtcbin's bundle funnel pushed a segment event down the send path at every change between
/// audio and video, about once a packet; only the first of the same segments goes on now.
@Suite(.serialized) struct SendPathSegmentTests {
    @Test func repeatedSegmentsStopAtTheFunnelAndMediaStillFlows() async throws {
        let (pair, atAnswerer, _) = try await flowingPair()
        let sender = try #require(await pair.offerer.session)
        let filter = try #require(sender.segmentFilters.first)
        #expect(sender.segmentFilters.count == 1, "max-bundle: one transport, one funnel")
        let before = (dropped: filter.dropped, video: atAnswerer.video.count, audio: atAnswerer.audio.count)
        try await eventually(.seconds(10), "a second of media") {
            atAnswerer.video.count >= before.video + 25 && atAnswerer.audio.count >= before.audio + 40
        }
        // 30 fps video and 50 audio packets a second take turns: dozens of repeats a second.
        #expect(filter.dropped - before.dropped >= 30, "kept back \(filter.dropped - before.dropped)")
        #expect(filter.forwarded <= 2, "forwarded \(filter.forwarded)")
        await pair.close()
    }
}
