import GStreamer

/// How rtpbin lines a far end's audio up with its video from RTCP sender reports, and what our
/// own reports say.
///
/// rtpbin maps every stream onto the sender's NTP clock from its sender reports and moves the
/// stream's jitter-buffer timestamps (`ts-offset`) to the newest report's mapping. Two of its
/// defaults work against lip sync:
/// - it ignores a correction under 4 ms (`min-ts-offset`), so streams first lined up by arrival
///   stayed up to 4 ms apart for the whole call (a known 40 ms came out 33.5–37.5 ms in
///   `LipSyncTests`, 39.5–40.5 with 1 ms);
/// - our reports paired each stream's RTP time with when its packets were *sent*
///   (`rtcp-sync-send-time`), not when what they carry was captured: audio waits for a whole Opus
///   frame and video does not, so the far end's mapping moved with our encoders' timing. Capture
///   time is what libwebrtc reports too.
///
/// A running average over the reports (`ts-offset-smoothing-factor` 8), against far ends whose
/// reports jitter, was tried and left out: it also slows the first correction to several reports
/// (a recording 21 ms off still 4.5 ms off 4 s in, under load). The jitter is taken out of the
/// reports themselves before rtpbin reads them instead (`SenderReportSmoothing`).
enum SenderReportSync {
    /// The smallest correction rtpbin makes, in nanoseconds.
    static let minimumCorrection: UInt64 = 1_000_000

    static func configure(_ webrtc: WebRTCBin) throws(GStreamerError) {
        guard let rtpBin = webrtc.rtpBin else { throw .notSupported("webrtcbin has no rtpbin child to configure") }
        try rtpBin.set(RTPBinProperty.minTsOffset, minimumCorrection)
        try rtpBin.set(RTPBinProperty.rtcpSyncSendTime, false)
    }
}
