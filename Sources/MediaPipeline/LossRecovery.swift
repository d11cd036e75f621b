/// How a call protects its media against a lossy or narrow path, as libwebrtc does by default.
///
/// These are switches beyond the seed's `MediaParameters` (the iOS SDK has libwebrtc do all of it
/// with no setting), each negotiated, so a far end that does not support one simply does not use
/// it. Retransmission is on by default. FEC and bandwidth adaptation are opt-in (`.adaptive`) for
/// now: on GStreamer 1.22 their feedback is partial (webrtcbin keeps one receiver report per far
/// end; its RED encoder moves the transport-wide sequence number), and measured against an
/// impaired path they still cost frames at 5 % random loss that retransmission alone does not.
public struct LossRecovery: Sendable, Equatable {
    /// NACK with RTX retransmission (RFC 4588) for audio and video: a lost packet is asked for
    /// again and resent on its own payload type, within the receiver's jitter-buffer latency.
    public var retransmission: Bool
    /// RED/ULPFEC forward error correction (RFC 2198, RFC 5109) for video: parity packets repair
    /// a loss with no round trip. The share of FEC follows the loss the far end reports.
    public var forwardErrorCorrection: Bool
    /// The sender estimates the rate the path carries (from the far end's RTCP loss and round-trip
    /// reports) and steps the video encoder's bitrate, and below `lowRateFloorKbps` its frame
    /// rate, within `videoMaxBitrate`; Opus in-band FEC is tuned to the reported loss.
    public var bandwidthAdaptation: Bool
    /// The lowest video bitrate the adaptation goes to, in kbit/s.
    public var minVideoBitrateKbps: Int
    /// Below this estimate (kbit/s) the frame rate is halved rather than every frame starved.
    public var lowRateFloorKbps: Int

    public init(retransmission: Bool = true, forwardErrorCorrection: Bool = false, bandwidthAdaptation: Bool = false,
                minVideoBitrateKbps: Int = 60, lowRateFloorKbps: Int = 200) {
        self.retransmission = retransmission
        self.forwardErrorCorrection = forwardErrorCorrection
        self.bandwidthAdaptation = bandwidthAdaptation
        self.minVideoBitrateKbps = minVideoBitrateKbps
        self.lowRateFloorKbps = lowRateFloorKbps
    }

    /// Nothing but what the codecs do by themselves (for comparisons and constrained peers).
    public static let off = LossRecovery(retransmission: false, forwardErrorCorrection: false, bandwidthAdaptation: false)

    /// Everything: retransmission, video FEC and bandwidth adaptation.
    public static let adaptive = LossRecovery(retransmission: true, forwardErrorCorrection: true, bandwidthAdaptation: true)
}
