import MediaPipeline
import Testing

/// The rate control's queue signal: transport-wide feedback packet by packet, the one-way delay
/// over its floor (see `BandwidthEstimator.update(feedback:at:)`).
struct BandwidthEstimatorQueueTests {
    /// One feedback message: a frame's `count` packets sent together at `sent`, arriving over
    /// 10 ms from `sent + delay` on (the far end's clock is offset by 5 s: only differences count).
    private func frame(sent: Double, delay: Double, count: Int = 4) -> [BandwidthEstimator.FeedbackPacket] {
        (0..<count).map { index in .init(sent: sent, arrived: 5 + sent + delay + Double(index) * 0.0025) }
    }

    private func clean(_ time: Double, bytes: UInt64) -> BandwidthEstimator.Report {
        .init(time: time, bytesSent: bytes, reported: [1: .init(packetsSent: UInt64(time * 100), packetsLost: 0)], roundTripTime: 0.002)
    }

    /// Feeds 30 frames a second from `from` to `to`, each delayed by `delay(t)`, and a clean
    /// receiver report every half second at 480 kbit/s; returns the decisions made.
    private func run(_ estimator: inout BandwidthEstimator, from: Double, to: Double, delay: (Double) -> Double) -> [BandwidthEstimator.Decision] {
        var decisions: [BandwidthEstimator.Decision] = []
        // Frames by number (30 a second), so every 15th lands exactly on a report's half second.
        for frameNumber in Int((from * 30).rounded())..<Int((to * 30).rounded()) {
            let time = Double(frameNumber) / 30
            if let decision = estimator.update(feedback: frame(sent: time, delay: delay(time)), at: time) { decisions.append(decision) }
            if frameNumber % 15 == 0, let decision = estimator.update(clean(time, bytes: UInt64(time * 60_000))) {
                decisions.append(decision)
            }
        }
        return decisions
    }

    /// An estimator that has probed for 3 s over a path with no queue.
    private func probedOverAnEmptyPath() -> BandwidthEstimator {
        var estimator = BandwidthEstimator(settings: .init(minKbps: 100, maxKbps: 1500, lowRateFloorKbps: 200), frameRate: 30)
        _ = run(&estimator, from: 0, to: 3) { _ in 0.001 }
        return estimator
    }

    @Test("the probe holds while the feedback's standing queue grows, and goes on once it is gone")
    func probeHoldsOnAStandingQueue() {
        var estimator = BandwidthEstimator(settings: .init(minKbps: 100, maxKbps: 1500, lowRateFloorKbps: 200), frameRate: 30)
        let warmUp = run(&estimator, from: 0, to: 3) { _ in 0.001 }
        #expect(warmUp.allSatisfy { $0.reason == "probe" } && estimator.decision.targetKbps > 300)
        // A queue of 15–20 ms: over the hold threshold, under the cut; seen once the standing
        // window (150 ms) holds only its packets.
        let queue: (Double) -> Double = { time in 0.015 + (time - 3) / 600 }
        _ = run(&estimator, from: 3, to: 3.2, delay: queue)
        let before = estimator.decision.targetKbps
        let held = run(&estimator, from: 3.2, to: 6, delay: queue)
        #expect(held.isEmpty, "\(held)")
        #expect(estimator.decision.targetKbps == before)
        #expect(estimator.standingQueue.map { $0 > BandwidthEstimator.queueHoldThreshold } == true)
        // The queue drains: the probe goes on.
        let resumed = run(&estimator, from: 6, to: 9) { _ in 0.001 }
        #expect(resumed.contains { $0.reason == "probe" } && estimator.decision.targetKbps > before, "\(resumed) \(estimator.decision) \(String(describing: estimator.standingQueue))")
    }

    @Test("a queue that keeps growing is cut before it reaches 100 ms, and not cut again while it drains")
    func growingQueueIsCut() {
        var estimator = probedOverAnEmptyPath()
        let before = estimator.decision.targetKbps
        // 60 ms a second of queue, as behind the lab's 500 kbit/s cap when the probe crossed it:
        // one cut (the next would wait for the encoder to follow, 0.6 s).
        let decisions = run(&estimator, from: 3, to: 3.8) { time in 0.001 + (time - 3) * 0.06 }
        let cuts = decisions.filter { $0.reason == "queue" }
        #expect(cuts.count == 1, "\(decisions)")
        #expect(estimator.decision.targetKbps < before, "\(decisions)")
        let afterCut = estimator.decision.targetKbps
        // It drains: no further cut, and the probe holds while it stands.
        let draining = run(&estimator, from: 3.8, to: 4.6) { time in max(0.001, 0.040 - (time - 3.8) * 0.05) }
        #expect(draining.isEmpty, "\(draining)")
        #expect(estimator.decision.targetKbps == afterCut)
    }

    @Test("a frame's own burst and lost packets do not read as a queue")
    func burstsAndLossAreNoQueue() {
        var estimator = BandwidthEstimator(settings: .init(minKbps: 100, maxKbps: 1500, lowRateFloorKbps: 200), frameRate: 30)
        var time = 0.0
        while time < 3 {
            // A key frame's 20 packets spread over 60 ms at the bottleneck, one of them lost.
            var packets = (0..<20).map { BandwidthEstimator.FeedbackPacket(sent: time, arrived: 5 + time + 0.001 + Double($0) * 0.003) }
            packets[7].arrived = nil
            _ = estimator.update(feedback: packets, at: time)
            time += 1.0 / 30
        }
        #expect(estimator.standingQueue.map { $0 < BandwidthEstimator.queueHoldThreshold } == true)
        #expect(estimator.update(feedback: [.init(sent: 3, arrived: nil)], at: 3) == nil)
    }

    @Test("one queue's cuts stop at 70 % of the target it started at, however long it grows")
    func queueCutsHaveAFloor() {
        var estimator = probedOverAnEmptyPath()
        let before = estimator.decision.targetKbps
        // The encoder never follows: the queue grows to 90 ms over 3 s.
        let decisions = run(&estimator, from: 3, to: 6) { time in 0.001 + (time - 3) * 0.03 }
        #expect(decisions.filter { $0.reason == "queue" }.count >= 2, "\(decisions)")
        #expect(estimator.decision.targetKbps >= before * 7 / 10 - 1 && estimator.decision.targetKbps < before, "\(decisions)")
    }
}
