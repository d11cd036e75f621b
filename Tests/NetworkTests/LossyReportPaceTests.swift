import Foundation
import GStreamer
import MediaPipeline
import NetworkTestSupport
import Testing
@testable import WebRTC

/// A NACK leaves in an RTCP report, and rtpsession spaces its reports by the RTCP allowance: at
/// 100 kbit/s a call-sized stream's receiver reported every 62–69 ms under 20 % loss, and a retry
/// that found the one early slot of an interval taken waited for the next report. So under loss the
/// receiving session's allowance rises to `LossResponse.lossyRTCPFloorBitsPerSecond` (see there).
@Suite(.serialized, .enabled(if: NetworkLab.isAvailable, "\(NetworkLab.unavailableReason ?? "")"))
struct LossyReportPaceTests {
    @Test("at 20 % loss the receiving RTP session's RTCP allowance rises from the calm 10 kbit/s to the 200 kbit/s floor")
    func lossRaisesTheReportAllowance() async throws {
        let lab = try NetworkLab()
        defer { lab.close() }
        let call = try await LabCall.start(lab: lab)
        let session = try #require(await call.local.session)
        let rtpSession = try #require(session.receivePath.sessions.first)
        let allowance = { () throws -> Double in try rtpSession.get(RTPSessionProperty.rtcpFraction) }
        // The call's start asks for key frames, which hurries RTCP for 2 s; then it is calm.
        try await waitUntil(.seconds(10), "RTCP calm on the clean path", allowance, is: LossResponse.calmRTCPBitsPerSecond)
        try lab.setLoss(percent: 20)
        // The loss is noticed at the next liveness tick that reads the stats. 320×240 video from
        // the lab arrives far under 2 Mbit/s, so the floor is the allowance.
        try await waitUntil(.seconds(10), "RTCP at the lossy floor under 20 % loss", allowance, is: LossResponse.lossyRTCPFloorBitsPerSecond)
        #expect(LossResponse.lossyRTCPFloorBitsPerSecond == 200_000)
        try lab.setLoss(percent: 0)
        await call.close()
    }

    /// Polls `value` every 100 ms until it is `target`, failing with `what` and the last value after `timeout`.
    private func waitUntil(_ timeout: Duration, _ what: String, _ value: () throws -> Double, is target: Double) async throws {
        let deadline = ContinuousClock.now + timeout
        while true {
            let current = try value()
            if current == target { return }
            try #require(ContinuousClock.now < deadline, "\(what): the allowance is \(current) bit/s")
            try await Task.sleep(for: .milliseconds(100))
        }
    }
}
