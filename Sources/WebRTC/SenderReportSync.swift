import GStreamer

/// How rtpbin lines a far end's audio up with its video from RTCP sender reports, and what our
/// own reports say.
///
/// rtpbin maps every stream onto the sender's NTP clock from its sender reports and moves the
/// stream's jitter-buffer timestamps (`ts-offset`) to the newest report's mapping. Three of its
/// defaults work against lip sync:
/// - it follows each report at once: a far end whose reports pair RTP and NTP times with jitter
///   (aiortc's) made a recording's audio step by 6–22 ms against its video for about a second at a
///   time. A running average over the reports (`ts-offset-smoothing-factor`; the first report is
///   taken as it is) shrinks the jitter to a fraction, and a lasting change still comes through;
/// - it ignores a correction under 4 ms (`min-ts-offset`), so streams first lined up by arrival
///   stayed up to 4 ms apart for the whole call (a known 40 ms came out 33.5–37.5 ms in
///   `LipSyncTests`, 39.5 with 1 ms);
/// - our reports paired each stream's RTP time with when its packets were *sent*
///   (`rtcp-sync-send-time`), not when what they carry was captured: audio waits for a whole Opus
///   frame and video does not, so the far end's mapping moved with our encoders' timing. Capture
///   time is what libwebrtc reports too.
enum SenderReportSync {
    /// Reports in rtpbin's running average of each stream's offset.
    static let smoothingReports: UInt = 8
    /// The smallest correction rtpbin makes, in nanoseconds.
    static let minimumCorrection: UInt64 = 1_000_000

    static func configure(_ webrtc: WebRTCBin) throws(GStreamerError) {
        guard let rtpBin = webrtc.rtpBin else { throw .notSupported("webrtcbin has no rtpbin child to configure") }
        try rtpBin.set("ts-offset-smoothing-factor", smoothingReports)
        try rtpBin.set("min-ts-offset", minimumCorrection)
        try rtpBin.set("rtcp-sync-send-time", false)
    }
}
