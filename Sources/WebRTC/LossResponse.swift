/// How the receiving side answers loss it sees on its incoming streams.
///
/// A NACK (or a PLI) can leave only in an RTCP packet, and under the feedback profile WebRTC uses
/// (RFC 4585) GStreamer 1.22 spaces regular reports by the RTCP allowance (`rtcp-fraction`, bits/s)
/// and by T_rr_interval (`rtcp-min-interval`, randomised ×0.5–1.5), and allows one early packet per
/// such interval. At the calm pace (10 kbit/s, 100 ms) a resend request waited 100 ms at the median
/// and up to a second (measured), longer than the jitter buffer waits for the answer, so NACK cost
/// more frames than it saved. So once packets go missing the allowance rises and the interval
/// drops (`lossyRTCPMinInterval`; the allowance is a tenth of what arrives, within
/// `lossyRTCPFloorBitsPerSecond`…`lossyRTCPBitsPerSecond`, and it is the allowance, not the
/// interval, that sets the pace: see the floor) and the jitter
/// buffer grows to `lossyLatencyMs`, which covers a request's wait, the round trip and retries, as
/// libwebrtc's jitter buffer grows with its NACK round trips. At 20 % loss a request and its
/// resend both get through 64 % of the time, so a packet often needs three or four tries: with
/// 20 ms and 200 ms the far end's picture froze 2.8–3.8 s in 20 s (`bench-call network`, medians
/// of three runs per direction), with 10 ms and 300 ms 1.9–2.8 s. After `calmAfter` without loss RTCP
/// slows down again; the jitter buffer keeps its length, since shortening it would throw away
/// the frames it holds.
///
/// A key-frame request (PLI/FIR) waits for an RTCP slot the same way: a recorder attaching to a
/// browser's stream saw its request reach the browser 235 ms after asking at p95 (481 ms at
/// worst). So while something here waits for a key frame (`keyFrameWanted`, for `keyFrameHurry`)
/// RTCP runs at the lossy pace too, without touching the jitter buffer.
struct LossResponse {
    struct Feedback: Equatable {
        /// rtpsession `rtcp-fraction` (values above 1 are bits per second).
        var rtcpBitsPerSecond: Double
        /// rtpsession `rtcp-min-interval`: T_rr_interval under the feedback profile.
        var rtcpMinInterval: Duration
        var jitterBufferLatencyMs: Int
    }

    static let calmRTCPBitsPerSecond = 10_000.0
    static let lossyRTCPBitsPerSecond = 400_000.0
    /// The allowance under loss for a call-sized stream (under 2 Mbit/s arriving). rtpsession spaces
    /// its compound reports (report blocks, SDES, transport-wide feedback, NACKs: ~250 bytes with
    /// SRTP) by the allowance, and lets a NACK go early only once per such interval; a retry that
    /// finds the early slot taken waits for the next regular report. At 100 kbit/s that interval
    /// was 62–69 ms, not the 10 ms floor (rtpsession's log, 20 % loss), so a third of the jitter
    /// buffer's 33 ms retries never left as a NACK of their own, and a packet whose resend was lost
    /// twice froze the picture for 0.15–0.5 s. At 200 kbit/s the interval is ~35 ms, in step with
    /// the retries. Below ~100 kbit/s of allowance the interval outgrows the jitter buffer
    /// altogether (a 100 kbit/s stream at 5 % loss kept 40–60 % of its frames at 15 kbit/s, all of
    /// them at 100).
    static let lossyRTCPFloorBitsPerSecond = 200_000.0
    /// The allowance while something here waits for a key frame and nothing is lost: one request
    /// leaves early whatever the interval, so the hurry needs no more than this.
    static let hurryRTCPBitsPerSecond = 100_000.0
    static let lossyRTCPMinInterval: Duration = .milliseconds(10)
    static let lossyLatencyMs = 300
    static let calmAfter = 15.0
    /// How long RTCP stays quick after a key-frame request: the recorder asks again every 100 ms
    /// for its first 5 s, the decoder's requests come one per gap.
    static let keyFrameHurry = 2.0

    private let calm: Feedback
    private(set) var current: Feedback
    private var lastLost = 0
    private var lastLossAt: Double?
    private var hurriedUntil: Double?
    private var lastReceived: (time: Double, bytes: UInt64)?
    private var receivedBitsPerSecond = 0.0

    init(rtcpMinInterval: Duration, jitterBufferLatencyMs: Int) {
        calm = Feedback(rtcpBitsPerSecond: Self.calmRTCPBitsPerSecond, rtcpMinInterval: rtcpMinInterval,
                        jitterBufferLatencyMs: jitterBufferLatencyMs)
        current = calm
    }

    /// Folds in the packets lost and the bytes received so far on every incoming stream (seconds
    /// on a monotonic clock); returns the feedback settings when they change.
    mutating func update(totalLost: Int, bytesReceived: UInt64, at time: Double) -> Feedback? {
        if totalLost > lastLost { lastLossAt = time }
        lastLost = max(lastLost, totalLost)
        if let lastReceived, time > lastReceived.time, bytesReceived >= lastReceived.bytes {
            receivedBitsPerSecond = Double(bytesReceived - lastReceived.bytes) * 8 / (time - lastReceived.time)
        }
        lastReceived = (time, bytesReceived)
        return settle(at: time)
    }

    /// Something here asked the far end for a key frame at `time`: RTCP goes quick (if it is not
    /// already) for `keyFrameHurry`; returns the feedback settings when they change.
    mutating func keyFrameWanted(at time: Double) -> Feedback? {
        hurriedUntil = max(hurriedUntil ?? time, time + Self.keyFrameHurry)
        return settle(at: time)
    }

    private mutating func settle(at time: Double) -> Feedback? {
        var next = current
        if let lastLossAt, time - lastLossAt < Self.calmAfter {
            // Rounded to 5 kbit/s so a wobbling rate does not reconfigure RTCP every tick.
            let allowance = (receivedBitsPerSecond / 10 / 5_000).rounded() * 5_000
            next.rtcpBitsPerSecond = min(Self.lossyRTCPBitsPerSecond, max(Self.lossyRTCPFloorBitsPerSecond, allowance))
            next.rtcpMinInterval = min(calm.rtcpMinInterval, Self.lossyRTCPMinInterval)
            next.jitterBufferLatencyMs = max(current.jitterBufferLatencyMs, Self.lossyLatencyMs)
        } else if let hurriedUntil, time < hurriedUntil {
            next.rtcpBitsPerSecond = Self.hurryRTCPBitsPerSecond
            next.rtcpMinInterval = min(calm.rtcpMinInterval, Self.lossyRTCPMinInterval)
        } else {
            next.rtcpBitsPerSecond = calm.rtcpBitsPerSecond
            next.rtcpMinInterval = calm.rtcpMinInterval
        }
        guard next != current else { return nil }
        current = next
        return next
    }
}
