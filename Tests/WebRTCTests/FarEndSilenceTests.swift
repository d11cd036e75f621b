import Testing
@testable import WebRTC

/// The silence bounds from what the far end has shown: synthetic arrival times, no call.
struct FarEndSilenceTests {
    static let configured = FarEndSilence.Bounds(disconnected: .seconds(3), failed: .seconds(10))

    /// A watch that saw arrivals at each of `gaps` apart, starting at `start`.
    private static func watch(gaps: [Duration], start: ContinuousClock.Instant = .now) -> (FarEndSilence, ContinuousClock.Instant) {
        var silence = FarEndSilence(now: start)
        var now = start
        for (index, gap) in gaps.enumerated() {
            now += gap
            silence.take(arrivals: UInt64(index + 1), now: now)
        }
        return (silence, now)
    }

    @Test func mediaSenderKeepsTheConfiguredBoundsFromTheStart() {
        let (silence, _) = Self.watch(gaps: [])
        #expect(silence.bounds(configured: Self.configured, farEnd: .media) == Self.configured)
        let (flowing, _) = Self.watch(gaps: Array(repeating: .milliseconds(500), count: 20))
        #expect(flowing.bounds(configured: Self.configured, farEnd: .media) == Self.configured)
    }

    @Test func reportOnlyFarEndGetsTheCeilingUntilItsCadenceIsKnown() {
        let (silence, last) = Self.watch(gaps: [.seconds(2), .seconds(3)])
        let bounds = silence.bounds(configured: Self.configured, farEnd: .reportsOnly)
        #expect(bounds == FarEndSilence.Bounds(disconnected: .seconds(15), failed: .seconds(22)))
        #expect(silence.stall(now: last + .milliseconds(7500), bounds: bounds) == nil)
        #expect(silence.stall(now: last + .seconds(15), bounds: bounds) == .disconnected)
        #expect(silence.stall(now: last + .seconds(22), bounds: bounds) == .failed)
    }

    @Test func oftenReportingFarEndIsHeldToTheConfiguredBoundOnceLearned() {
        let (silence, _) = Self.watch(gaps: Array(repeating: .milliseconds(500), count: FarEndSilence.learnedGaps))
        #expect(silence.bounds(configured: Self.configured, farEnd: .reportsOnly) == Self.configured)
    }

    @Test func seldomReportingFarEndIsGivenTwiceItsLongestGap() {
        let gaps: [Duration] = [.seconds(3), .seconds(6), .milliseconds(2500), .seconds(5), .seconds(4), .seconds(7), .seconds(3), .seconds(5)]
        let (silence, _) = Self.watch(gaps: gaps)
        #expect(silence.bounds(configured: Self.configured, farEnd: .reportsOnly) == FarEndSilence.Bounds(disconnected: .seconds(14), failed: .seconds(21)))
    }

    /// A far end that announced media but only reports is misjudged once, then its gap counts.
    @Test func longGapFromAnAnnouncedSenderRaisesItsBound() {
        let (silence, _) = Self.watch(gaps: [.milliseconds(500), .seconds(5)])
        #expect(silence.bounds(configured: Self.configured, farEnd: .media).disconnected == .seconds(10))
    }

    @Test func dataOnlyConnectionKeepsItsConfiguredBounds() {
        let data = FarEndSilence.Bounds(disconnected: .seconds(40), failed: .seconds(40))
        let (silence, _) = Self.watch(gaps: [.seconds(30)])
        #expect(silence.bounds(configured: data, farEnd: .noMedia) == data)
        #expect(silence.bounds(configured: Self.configured, farEnd: .noMedia) == Self.configured)
    }

    @Test func restartForgetsTheCadence() {
        var (silence, last) = Self.watch(gaps: Array(repeating: .milliseconds(500), count: FarEndSilence.learnedGaps))
        silence.restart(now: last + .seconds(1))
        #expect(silence.bounds(configured: Self.configured, farEnd: .reportsOnly).disconnected == FarEndSilence.reportSilenceCeiling)
        #expect(silence.lastArrival == last + .seconds(1))
    }
}
