/// How many of the far end's resend requests an adapting sender answers.
///
/// Why: behind a full bottleneck (a 500 kbit/s cap) the far end asks again for every packet the
/// overflow lost, and again when the resend is lost too; answering them all sent 550–940 kbit/s
/// of resends on top of the video, the overflow never ended and the estimate was cut far under the
/// path (140–290 kbit/s). libwebrtc's pacer counts resends into the estimate's budget and resends
/// a packet at most once a round trip; so does this:
/// - resends may take `share` of the estimate (a token bucket holding 250 ms of it), a request
///   over that is left unanswered;
/// - a packet asked for again within a round trip of its last resend is not sent again (that
///   resend may still be on its way).
/// A pure state machine over request times, so tests drive it with any clock.
public struct RetransmissionBudget: Sendable {
    /// The share of the estimate resends may take.
    public static let share = 0.25
    /// What one resend is assumed to cost: requests name packets, not their sizes, and a video
    /// packet is close to the MTU.
    static let packetBits = 1_200.0 * 8
    static let burstSeconds = 0.25

    /// Kbit/s resends may take; nil: unlimited (no estimate yet).
    private var kbps: Double?
    private var tokens = 0.0
    private var lastTime: Double?
    /// When each packet (SSRC and sequence number) was last answered, for the last second or so.
    private var answered: [UInt64: Double] = [:]
    /// `answered` is pruned when it grows past this; it doubles when a second holds more, so a
    /// storm of requests does not prune on every one (this runs on the RTP session's thread).
    private var pruneAt = 512

    public private(set) var admitted = 0
    public private(set) var refused = 0

    public init() {}

    /// Follows the estimate: resends may take `share` of `estimateKbps` from now on.
    public mutating func follow(estimateKbps: Int) {
        kbps = max(1, Double(estimateKbps) * Self.share)
    }

    /// Whether to answer a request for packet `seqnum` of `ssrc` made at `time` (seconds),
    /// `roundTrip` seconds being the far end's latest round trip.
    public mutating func admit(ssrc: UInt32, seqnum: UInt16, at time: Double, roundTrip: Double) -> Bool {
        let key = UInt64(ssrc) << 16 | UInt64(seqnum)
        if let last = answered[key], time - last < max(roundTrip, 0.02) {
            refused += 1
            return false
        }
        if let kbps {
            let capacity = kbps * 1000 * Self.burstSeconds
            tokens = min(capacity, tokens + (lastTime.map { max(0, time - $0) } ?? Self.burstSeconds) * kbps * 1000)
            lastTime = time
            guard tokens >= Self.packetBits else {
                refused += 1
                return false
            }
            tokens -= Self.packetBits
        }
        answered[key] = time
        if answered.count > pruneAt {
            answered = answered.filter { time - $0.value < 1 }
            pruneAt = max(512, answered.count * 2)
        }
        admitted += 1
        return true
    }
}
