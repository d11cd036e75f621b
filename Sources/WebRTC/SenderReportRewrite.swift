/// Takes the jitter out of a far end's sender reports before rtpbin lines its streams up by them.
///
/// A sender report pairs an RTP timestamp with the sender's wall clock (NTP). rtpbin moves each
/// stream's timestamps to the newest report's pairing, so a sender whose pairing wobbles from
/// report to report (aiortc pairs the last packet's RTP time with when it was *sent*, 6–22 ms
/// off from one report to the next) made a recording's audio and video step apart and back for
/// about a second at a time. A sender's clocks do not really move against each other, so each
/// report's pairing is rewritten to the median of the stream's recent ones (its RTP time moved,
/// its NTP time, which round-trip times are computed from, kept):
/// - the first two reports go through as they are, so the first corrections come as fast as
///   before (aiortc's first report is often the odd one: 7–16 ms off the ones after it, sent
///   in the burst its encoder starts with);
/// - then the median of the last `window` reports, followed only when it moves by more than
///   `deadBand` (slow drift is still followed, jitter is not);
/// - a pairing more than `restartBeyond` away from the one in use is a new timeline (a sender
///   that restarted its clock): it goes through as it is and the history starts again.
struct SenderReportSmoother {
    static let window = 9
    static let settledReports = 3
    static let deadBand = 0.002
    static let restartBeyond = 1.0
    /// The RTP clock rates WebRTC media use; a stream's is the one the first reports agree on.
    static let knownClockRates: [Double] = [8_000, 16_000, 48_000, 90_000]
    /// At most this many far-end streams are followed; reports of others go through unchanged.
    static let maximumStreams = 64

    private struct Stream {
        let firstNTP: Double
        let firstRTP: UInt32
        var lastRTP: UInt32
        /// RTP time since the first report, unwrapped.
        var rtpSinceFirst: Int64 = 0
        var clockRate: Double?
        /// (NTP seconds, RTP ticks) since the first report, kept until the clock rate is known.
        var early: [(ntp: Double, rtp: Int64)] = []
        /// Recent pairings as offsets: RTP seconds minus NTP seconds, both since the first report.
        var offsets: [Double] = []
        /// The offset the reports passed on carry.
        var applied: Double = 0
        /// The pairing of the last report passed on: NTP seconds and its RTP time.
        var passedOn: (ntp: Double, rtp: UInt32)?
    }

    private var streams: [UInt32: Stream] = [:]

    /// When, on the sender's wall clock (NTP seconds), what `ssrc` stamped `rtp` was captured, as
    /// the reports passed on say; nil before a report of a known clock rate went through.
    func senderTime(ssrc: UInt32, rtp: UInt32) -> Double? {
        guard let stream = streams[ssrc], let rate = stream.clockRate, let pairing = stream.passedOn else { return nil }
        return pairing.ntp + Double(Int32(bitPattern: rtp &- pairing.rtp)) / rate
    }

    /// The RTP timestamp a report of `ssrc` should carry for `ntp` (64-bit NTP format) instead of `rtp`.
    mutating func rtpTimestamp(ssrc: UInt32, ntp: UInt64, rtp: UInt32) -> UInt32 {
        let ntpSeconds = Double(ntp >> 32) + Double(ntp & 0xFFFF_FFFF) / 4_294_967_296
        let passed = smoothedRTP(ssrc: ssrc, ntpSeconds: ntpSeconds, rtp: rtp)
        if streams[ssrc] != nil { streams[ssrc]?.passedOn = (ntpSeconds, passed) }
        return passed
    }

    private mutating func smoothedRTP(ssrc: UInt32, ntpSeconds: Double, rtp: UInt32) -> UInt32 {
        guard var stream = streams[ssrc] else {
            if streams.count < Self.maximumStreams { streams[ssrc] = Stream(firstNTP: ntpSeconds, firstRTP: rtp, lastRTP: rtp) }
            return rtp
        }
        stream.rtpSinceFirst += Int64(Int32(bitPattern: rtp &- stream.lastRTP))
        stream.lastRTP = rtp
        let ntpSinceFirst = ntpSeconds - stream.firstNTP
        defer { streams[ssrc] = stream }
        guard let rate = stream.clockRate ?? Self.clockRate(of: &stream, ntpSinceFirst: ntpSinceFirst) else { return rtp }
        let offset = Double(stream.rtpSinceFirst) / rate - ntpSinceFirst
        if ntpSinceFirst < 0 || abs(offset - stream.applied) > Self.restartBeyond {
            stream = Stream(firstNTP: ntpSeconds, firstRTP: rtp, lastRTP: rtp, clockRate: rate, offsets: [0])
            return rtp
        }
        stream.offsets.append(offset)
        if stream.offsets.count > Self.window { stream.offsets.removeFirst(stream.offsets.count - Self.window) }
        if stream.offsets.count < Self.settledReports {
            stream.applied = offset
        } else {
            let median = stream.offsets.sorted()[stream.offsets.count / 2]
            if abs(median - stream.applied) > Self.deadBand { stream.applied = median }
        }
        let ticks = ((stream.applied + ntpSinceFirst) * rate).rounded()
        return stream.firstRTP &+ UInt32(truncatingIfNeeded: Int64(ticks))
    }

    /// Settles the stream's clock rate from its reports so far (RTP ticks over NTP seconds, at
    /// least 0.1 s apart, within a quarter of a known rate); nil while they do not tell.
    private static func clockRate(of stream: inout Stream, ntpSinceFirst: Double) -> Double? {
        guard ntpSinceFirst >= 0.1 else {
            if stream.early.count < Self.window { stream.early.append((ntpSinceFirst, stream.rtpSinceFirst)) }
            return nil
        }
        let measured = Double(stream.rtpSinceFirst) / ntpSinceFirst
        guard let rate = knownClockRates.first(where: { abs(measured - $0) <= $0 / 4 }) else { return nil }
        stream.clockRate = rate
        // The reports until now went through as they came.
        stream.offsets = [0] + stream.early.map { Double($0.rtp) / rate - $0.ntp }
        stream.early = []
        return rate
    }
}

/// Rewrites the sender reports in a compound RTCP packet through a `SenderReportSmoother`.
enum SenderReportRewrite {
    static let senderReportType: UInt8 = 200
    /// Header (4), SSRC (4), NTP (8), RTP (4), packet and octet counts (8).
    static let senderInfoEnd = 28

    /// Bytes to write over the packet: a smoothed RTP timestamp, big-endian, at `offset`.
    struct Patch: Equatable {
        var offset: Int
        var bytes: [UInt8]
    }

    /// The patches that carry the smoothed RTP timestamps; none for a packet that is not RTCP
    /// version 2 or whose reports need no change. A malformed packet is read up to where it
    /// stops making sense and never beyond its bytes.
    static func patches(for packet: UnsafeRawBufferPointer, smoother: inout SenderReportSmoother) -> [Patch] {
        var patches: [Patch] = []
        var offset = 0
        while offset + 4 <= packet.count, packet[offset] >> 6 == 2 {
            let length = (Int(packet[offset + 2]) << 8 | Int(packet[offset + 3]) + 1) * 4
            guard offset + length <= packet.count else { break }
            if packet[offset + 1] == senderReportType, length >= senderInfoEnd {
                let ssrc = UInt32(bigEndianBytes: packet, at: offset + 4)
                let ntp = UInt64(UInt32(bigEndianBytes: packet, at: offset + 8)) << 32 | UInt64(UInt32(bigEndianBytes: packet, at: offset + 12))
                let rtp = UInt32(bigEndianBytes: packet, at: offset + 16)
                let smoothed = smoother.rtpTimestamp(ssrc: ssrc, ntp: ntp, rtp: rtp)
                if smoothed != rtp {
                    patches.append(Patch(offset: offset + 16, bytes: withUnsafeBytes(of: smoothed.bigEndian, Array.init)))
                }
            }
            offset += length
        }
        return patches
    }
}

private extension UInt32 {
    init(bigEndianBytes bytes: UnsafeRawBufferPointer, at offset: Int) {
        self = UInt32(bytes[offset]) << 24 | UInt32(bytes[offset + 1]) << 16 | UInt32(bytes[offset + 2]) << 8 | UInt32(bytes[offset + 3])
    }
}
