/// How long the far end may stay silent before this side reports it disconnected, then failed:
/// as long as what it has shown makes plausible, not one bound for every far end.
///
/// A far end that sends media sends a packet every few milliseconds, so 3 s without one
/// (`disconnectedAfter`) means it is gone. One that sends none sends only RTCP reports, and
/// RFC 3550 lets it space them 5 s apart (§6.2's minimum, GStreamer's `rtcp-min-interval`
/// default), randomised ×0.5–1.5 by GStreamer: up to 7.5 s. A bare webrtcbin that only receives
/// does exactly that, and at 3 s its caller reported it disconnected every other report and
/// rebuilt the call when two were late. Its ICE traffic cannot fill the gaps: libnice 0.1.21 as
/// webrtcbin 1.22 sets it up checks no consent (RFC 7675) and sends a Binding indication every
/// 25 s, and it hands no STUN message to nicesrc and tells of none by a signal.
///
/// So the bound follows the gaps between the tick-times at which something arrived: twice the
/// longest of the last `learnedGaps` (one report lost or late), never under the configured bound,
/// never over `reportSilenceCeiling`. Until that many gaps are seen, a far end that negotiated to
/// send media gets the configured bound (and twice any longer gap seen), one that only reports
/// gets the ceiling, and a connection without media (data channels alone) gets the configured
/// bounds throughout. Failed follows disconnected at the configured distance.
struct FarEndSilence {
    /// The longest regular report interval RFC 3550 lets a participant use at its 5 s minimum, as
    /// GStreamer randomises it (RFC 3550 §6.3.1's own upper end is 5 s × 1.5 ÷ 1.21828 ≈ 6.2 s).
    static let longestReportInterval: Duration = .milliseconds(7500)
    /// A gap this many times the longest seen is silence: one report lost or late.
    static let gapsPerBound = 2
    /// The most a far end that only reports is given: one report lost at the longest interval.
    static let reportSilenceCeiling = longestReportInterval * gapsPerBound
    /// Gaps seen before the bound is the far end's own rather than the prior.
    static let learnedGaps = 8

    /// What the last negotiation says the far end sends.
    enum FarEnd { case media, reportsOnly, noMedia }

    struct Bounds: Equatable {
        var disconnected: Duration
        var failed: Duration
    }

    /// When something last arrived (at a tick, or a new incoming stream).
    private(set) var lastArrival: ContinuousClock.Instant
    private var arrivals: UInt64 = 0
    /// The last `learnedGaps` gaps between arrivals, oldest first.
    private var gaps: [Duration] = []

    init(now: ContinuousClock.Instant = .now) { lastArrival = now }

    /// A new connection: its silence counts from `now`, and what the far end showed before is
    /// forgotten.
    mutating func restart(now: ContinuousClock.Instant) {
        lastArrival = now
        gaps = []
    }

    /// Something arrived that the count does not show (an incoming stream).
    mutating func noteArrival(now: ContinuousClock.Instant) { lastArrival = now }

    /// The transport's packet count at a tick.
    mutating func take(arrivals count: UInt64, now: ContinuousClock.Instant) {
        guard count != arrivals else { return }
        arrivals = count
        gaps.append(now - lastArrival)
        if gaps.count > Self.learnedGaps { gaps.removeFirst(gaps.count - Self.learnedGaps) }
        lastArrival = now
    }

    func bounds(configured: Bounds, farEnd: FarEnd) -> Bounds {
        guard farEnd != .noMedia else { return configured }
        let fromGaps = (gaps.max() ?? .zero) * Self.gapsPerBound
        let disconnected: Duration
        if gaps.count >= Self.learnedGaps {
            disconnected = max(configured.disconnected, min(Self.reportSilenceCeiling, fromGaps))
        } else {
            let prior = farEnd == .media ? configured.disconnected : Self.reportSilenceCeiling
            disconnected = max(configured.disconnected, min(Self.reportSilenceCeiling, max(prior, fromGaps)))
        }
        return Bounds(disconnected: disconnected, failed: configured.failed + (disconnected - configured.disconnected))
    }

    /// What the silence since the last arrival makes of a connected far end: nil while it is alive.
    func stall(now: ContinuousClock.Instant, bounds: Bounds) -> PeerState? {
        let silence = now - lastArrival
        return silence >= bounds.failed ? .failed : silence >= bounds.disconnected ? .disconnected : nil
    }
}
