import Testing
@testable import WebRTC

/// The far end's sender reports as rtpbin gets them: a jittery sender's pairings (aiortc's, 6-22 ms
/// off from report to report) come out steady, a steady sender's untouched, the first report as it
/// was sent, and RTCP packets rewritten only where a sender report's RTP time is.
struct SenderReportSmoothingTests {
    static let ssrc: UInt32 = 0x1234_5678
    static let firstNTPSeconds = 3_900_000_000.0
    static let firstRTP: UInt32 = 4_294_000_000 // wraps within the first minute at 48 kHz

    static func ntp(_ seconds: Double) -> UInt64 {
        let whole = seconds.rounded(.down)
        return UInt64(whole) << 32 | UInt64(((seconds - whole) * 4_294_967_296).rounded(.down))
    }

    /// The pairing a report carries, as an offset in seconds from the true one (RTP time minus NTP time).
    static func offset(rtp: UInt32, atSecond second: Double, rate: Double) -> Double {
        Double(Int32(bitPattern: rtp &- firstRTP &- UInt32(truncatingIfNeeded: Int64((second * rate).rounded())))) / rate
    }

    /// Reports once a second whose pairings are off by `jitter[i]` seconds; what they carry after smoothing.
    static func smoothed(jitter: [Double], rate: Double, smoother: inout SenderReportSmoother) -> [Double] {
        jitter.enumerated().map { index, off in
            let second = Double(index)
            let rtp = firstRTP &+ UInt32(truncatingIfNeeded: Int64(((second + off) * rate).rounded()))
            let out = smoother.rtpTimestamp(ssrc: ssrc, ntp: ntp(firstNTPSeconds + second), rtp: rtp)
            return offset(rtp: out, atSecond: second, rate: rate)
        }
    }

    @Test func jitteryReportsComeOutSteady() {
        // aiortc-like: each report's RTP time is the last packet's, its NTP time when it was sent.
        let jitter = [0.0, -0.006, -0.022, -0.009, -0.015, -0.006, -0.020, -0.011, -0.008, -0.018, -0.007, -0.013, -0.021, -0.010]
        for rate in [48_000.0, 90_000.0] {
            var smoother = SenderReportSmoother()
            let out = Self.smoothed(jitter: jitter, rate: rate, smoother: &smoother)
            #expect(abs(out[0]) < 0.0001, "the first report goes through as sent: \(out)")
            // Raw reports step by up to 16 ms; the smoothed ones by one move of the median, rarely.
            let steps = zip(out, out.dropFirst()).map { abs($1 - $0) }
            #expect(steps.allSatisfy { $0 < 0.0065 }, "steps \(steps) at \(rate)")
            #expect(steps.dropFirst(3).allSatisfy { $0 < 0.0045 }, "steps \(steps) at \(rate)")
            #expect(steps.dropFirst(3).filter { $0 > 0.0001 }.count <= 4, "steps \(steps) at \(rate)")
            let later = out.dropFirst(3)
            #expect(later.allSatisfy { $0 <= -0.005 && $0 >= -0.016 }, "within the jitter's middle, \(out)")
        }
    }

    @Test func steadyReportsAreUntouched() {
        var smoother = SenderReportSmoother()
        let out = Self.smoothed(jitter: Array(repeating: 0.0, count: 12), rate: 90_000, smoother: &smoother)
        #expect(out.allSatisfy { abs($0) < 0.00002 }, "\(out)")
    }

    @Test func aSenderThatRestartsItsClockIsFollowedAtOnce() {
        var smoother = SenderReportSmoother()
        let out = Self.smoothed(jitter: [0, 0, 0, 0, 0, 5, 5, 5], rate: 48_000, smoother: &smoother)
        #expect(abs(out[5] - 5) < 0.0001 && abs(out[7] - 5) < 0.0001, "\(out)")
    }

    @Test func aFirstOutlierIsCorrectedByTheSecondReport() {
        // aiortc's first report, sent in its encoder's starting burst, is often 7-16 ms off the rest.
        var smoother = SenderReportSmoother()
        let out = Self.smoothed(jitter: [0.016, 0, 0, 0, 0], rate: 48_000, smoother: &smoother)
        #expect(abs(out[0] - 0.016) < 0.0001, "\(out)")
        #expect(out.dropFirst().allSatisfy { abs($0) < 0.0001 }, "\(out)")
    }

    /// A compound packet as senders send it: SR (with one report block), SDES.
    static func compound(ssrc: UInt32, ntp: UInt64, rtp: UInt32) -> [UInt8] {
        func be32(_ value: UInt32) -> [UInt8] { withUnsafeBytes(of: value.bigEndian, Array.init) }
        var packet: [UInt8] = [0x81, 200, 0, 12] + be32(ssrc) + be32(UInt32(ntp >> 32)) + be32(UInt32(ntp & 0xFFFF_FFFF)) + be32(rtp)
        packet += be32(100) + be32(10_000) + [UInt8](repeating: 7, count: 24)
        packet += [0x81, 202, 0, 3] + be32(ssrc) + [1, 2, 0x61, 0x62, 0, 0, 0, 0]
        return packet
    }

    @Test func onlyTheSenderReportsRTPTimeIsRewritten() {
        var smoother = SenderReportSmoother()
        var patchesSeen: [[SenderReportRewrite.Patch]] = []
        for (second, off) in [(0.0, 0.0), (1.0, 0.0), (2.0, -0.020)] {
            let rtp = Self.firstRTP &+ UInt32(truncatingIfNeeded: Int64(((second + off) * 48_000).rounded()))
            let packet = Self.compound(ssrc: Self.ssrc, ntp: Self.ntp(Self.firstNTPSeconds + second), rtp: rtp)
            patchesSeen.append(packet.withUnsafeBytes { SenderReportRewrite.patches(for: $0, smoother: &smoother) })
        }
        #expect(patchesSeen[0].isEmpty && patchesSeen[1].isEmpty)
        let expected = Self.firstRTP &+ 96_000
        #expect(patchesSeen[2] == [SenderReportRewrite.Patch(offset: 16, bytes: withUnsafeBytes(of: expected.bigEndian, Array.init))])
    }

    @Test func malformedPacketsAreReadWithinTheirBytes() {
        var smoother = SenderReportSmoother()
        let whole = Self.compound(ssrc: 1, ntp: Self.ntp(Self.firstNTPSeconds), rtp: 1)
        var cases: [[UInt8]] = (0..<whole.count).map { Array(whole.prefix($0)) }
        cases.append([0x81, 200, 0xFF, 0xFF] + whole.dropFirst(4)) // a length past the end
        cases.append([0x41] + whole.dropFirst()) // version 1
        cases.append([0x81, 200, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0]) // an SR too short for its sender info
        for packet in cases {
            let patches = packet.withUnsafeBytes { SenderReportRewrite.patches(for: $0, smoother: &smoother) }
            #expect(patches.allSatisfy { $0.offset + $0.bytes.count <= packet.count })
        }
    }

    @Test func streamsBeyondTheBoundGoThroughUnchanged() {
        var smoother = SenderReportSmoother()
        for ssrc in 0..<UInt32(SenderReportSmoother.maximumStreams + 10) {
            for (second, off) in [(0.0, 0.0), (1.0, 0.0), (2.0, 0.0), (3.0, 0.5)] {
                let rtp = UInt32(truncatingIfNeeded: Int64(((second + off) * 8_000).rounded()))
                let out = smoother.rtpTimestamp(ssrc: ssrc, ntp: Self.ntp(Self.firstNTPSeconds + second), rtp: rtp)
                if second == 3, ssrc >= UInt32(SenderReportSmoother.maximumStreams) { #expect(out == rtp) }
                if second == 3, ssrc < UInt32(SenderReportSmoother.maximumStreams) { #expect(out != rtp) }
            }
        }
    }
}
