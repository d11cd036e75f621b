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
        #expect(lossy.rtcpMinInterval == .milliseconds(20) && lossy.jitterBufferLatencyMs == 200 && lossy.rtcpBitsPerSecond == 200_000)
        let unchanged = response.update(totalLost: 3, bytesReceived: 500_000, at: 2)
        #expect(unchanged == nil)
        let calmUpdate = response.update(totalLost: 3, bytesReceived: 500_000, at: 17)
        let calm = try #require(calmUpdate)
        #expect(calm.rtcpMinInterval == .milliseconds(100) && calm.rtcpBitsPerSecond == LossResponse.calmRTCPBitsPerSecond)
        #expect(calm.jitterBufferLatencyMs == 200)
    }
}
