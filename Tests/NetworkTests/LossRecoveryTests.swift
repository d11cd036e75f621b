import Foundation
import MediaPipeline
import NetworkTestSupport
import Testing
import WebRTC

/// Calls across an impaired path (see `NetworkLab`): what NACK/RTX and FEC buy at random loss.
@Suite(.serialized, .enabled(if: NetworkLab.isAvailable, "\(NetworkLab.unavailableReason ?? "")"))
struct LossRecoveryTests {
    /// The share of the frames a 30 fps sender made in `seconds` that the receiver decoded.
    private func deliveredShare(_ frames: FrameTimes, over seconds: Double) async throws -> Double {
        let start = ProcessInfo.processInfo.systemUptime
        try await Task.sleep(for: .seconds(seconds))
        return Double(frames.count(from: start, to: start + seconds)) / (seconds * 30)
    }

    @Test("at 5 % loss NACK/RTX delivers at least 95 % of the frames, and measurably more than without it")
    func fivePercentLoss() async throws {
        let lab = try NetworkLab()
        defer { lab.close() }
        let withRecovery = try await LabCall.start(lab: lab)
        try lab.setLoss(percent: 5)
        let recovered = try await deliveredShare(withRecovery.framesHere, over: 6)
        let recoveredAtLab = Double(withRecovery.framesAtLab.count) // keep the child's count for the message
        await withRecovery.close()
        try lab.setLoss(percent: 0)

        let without = try await LabCall.start(lab: lab, recovery: .off)
        try lab.setLoss(percent: 5)
        let unrecovered = try await deliveredShare(without.framesHere, over: 6)
        await without.close()

        #expect(recovered >= 0.95, "with NACK/RTX: \(recovered) of the frames (lab decoded \(recoveredAtLab))")
        #expect(unrecovered < recovered - 0.03, "without: \(unrecovered), with: \(recovered)")
    }
}
