import GStreamer
import MediaPipeline

/// Turns a call's `LossRecovery` switches into webrtcbin transceiver settings.
///
/// webrtcbin 1.22 does the protocol work once asked: with `do-nack` it offers (or accepts)
/// `a=rtcp-fb nack` and an RTX payload type per codec, puts `rtprtxsend` in front of the
/// transport and turns on the receiving jitter buffer's retransmission requests; with
/// `fec-type=ulp-red` it offers RED and ULPFEC and runs `rtpulpfecenc`/`rtpredenc`, whose parity
/// share is `fec-percentage` (bound to the transceiver, so adaptation changes it live).
enum LossRecoverySetup {
    /// The parity share before the far end reported any loss: enough to repair an occasional
    /// lost packet, small enough not to matter on a clean path.
    static let initialFECPercentage: UInt = 5

    static func configure(_ transceiver: Object, kind: MediaKind, _ recovery: LossRecovery) throws(GStreamerError) {
        if recovery.retransmission { try transceiver.set("do-nack", true) }
        // RED/ULPFEC for Opus is not what libwebrtc does (it uses Opus's own in-band FEC).
        if recovery.forwardErrorCorrection, kind == .video {
            try transceiver.set("fec-type", fromString: "ulp-red")
            try transceiver.set("fec-percentage", initialFECPercentage)
        }
    }
}
