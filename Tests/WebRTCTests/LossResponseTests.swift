import Testing
@testable import WebRTC

struct LossResponseTests {
    @Test("loss speeds RTCP up and lengthens the jitter buffer; 15 s clean slows RTCP again and keeps the buffer")
    func lossAndCalm() throws {
        var response = LossResponse(rtcpMinInterval: .milliseconds(100), jitterBufferLatencyMs: 100)
        let first = response.update(totalLost: 0, bytesReceived: 0, at: 0)
        #expect(first == nil)
        // 2 Mbit/s arriving when the first packets go missing: a tenth of it, within the bounds.
        let lossyUpdate = response.update(totalLost: 3, bytesReceived: 250_000, at: 1)
        let lossy = try #require(lossyUpdate)
        #expect(lossy.rtcpMinInterval == .milliseconds(10) && lossy.jitterBufferLatencyMs == 300 && lossy.rtcpBitsPerSecond == 200_000)
        let unchanged = response.update(totalLost: 3, bytesReceived: 500_000, at: 2)
        #expect(unchanged == nil)
        let calmUpdate = response.update(totalLost: 3, bytesReceived: 500_000, at: 17)
        let calm = try #require(calmUpdate)
        #expect(calm.rtcpMinInterval == .milliseconds(100) && calm.rtcpBitsPerSecond == LossResponse.calmRTCPBitsPerSecond)
        #expect(calm.jitterBufferLatencyMs == 300)
    }

    /// rtpsession spaces its reports by the allowance: at 100 kbit/s they came every 62–69 ms under
    /// 20 % loss, so a third of the jitter buffer's retries never left as a NACK of their own.
    @Test("a call-sized stream under loss gets the 200 kbit/s floor, twice the key-frame hurry's allowance")
    func callSizedStreamGetsTheLossyFloor() throws {
        var response = LossResponse(rtcpMinInterval: .milliseconds(100), jitterBufferLatencyMs: 100)
        _ = response.update(totalLost: 0, bytesReceived: 0, at: 0)
        // 400 kbit/s arriving (320×240 video and Opus): a tenth of it would be 40 kbit/s.
        let lossyUpdate = response.update(totalLost: 12, bytesReceived: 50_000, at: 1)
        let lossy = try #require(lossyUpdate)
        #expect(lossy.rtcpBitsPerSecond == 200_000 && lossy.rtcpMinInterval == .milliseconds(10))
        #expect(lossy.rtcpBitsPerSecond == 2 * LossResponse.hurryRTCPBitsPerSecond)
    }

    @Test("a key-frame request speeds RTCP up for 2 s without touching the jitter buffer; loss still wins while it lasts")
    func keyFrameRequestHurriesRTCP() throws {
        var response = LossResponse(rtcpMinInterval: .milliseconds(100), jitterBufferLatencyMs: 100)
        _ = response.update(totalLost: 0, bytesReceived: 0, at: 0)
        let hurriedUpdate = response.keyFrameWanted(at: 1)
        let hurried = try #require(hurriedUpdate)
        #expect(hurried.rtcpMinInterval == .milliseconds(10) && hurried.rtcpBitsPerSecond == LossResponse.hurryRTCPBitsPerSecond)
        #expect(hurried.jitterBufferLatencyMs == 100)
        // Asked again while quick: nothing to change, and the hurry lasts 2 s from the last request.
        #expect(response.keyFrameWanted(at: 2) == nil)
        #expect(response.update(totalLost: 0, bytesReceived: 125_000, at: 3.5) == nil)
        let calmUpdate = response.update(totalLost: 0, bytesReceived: 250_000, at: 4.1)
        let calm = try #require(calmUpdate)
        #expect(calm.rtcpMinInterval == .milliseconds(100) && calm.rtcpBitsPerSecond == LossResponse.calmRTCPBitsPerSecond)
        // Under loss the allowance follows what arrives, hurry or not.
        let lossyUpdate = response.update(totalLost: 5, bytesReceived: 562_500, at: 5.1) // 2.5 Mbit/s
        let lossy = try #require(lossyUpdate)
        #expect(lossy.rtcpBitsPerSecond == 250_000 && lossy.jitterBufferLatencyMs == 300)
        #expect(response.keyFrameWanted(at: 5.2) == nil)
    }
}
