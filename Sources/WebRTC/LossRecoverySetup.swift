import GStreamer
import MediaPipeline

/// Turns a call's `LossRecovery` switches into webrtcbin transceiver settings.
///
/// webrtcbin 1.22 does the protocol work once asked: with `do-nack` (video) it offers (or accepts)
/// `a=rtcp-fb nack` and an RTX payload type per codec, puts `rtprtxsend` in front of the
/// transport and turns on the receiving jitter buffer's retransmission requests; with
/// `fec-type=ulp-red` it offers RED and ULPFEC and runs `rtpulpfecenc`/`rtpredenc`, whose parity
/// share is `fec-percentage` (bound to the transceiver, so adaptation changes it live).
enum LossRecoverySetup {
    /// The parity share before the far end reported any loss: enough to repair an occasional
    /// lost packet, small enough not to matter on a clean path.
    static let initialFECPercentage: UInt = 5

    static func configure(_ transceiver: Object, kind: MediaKind, _ recovery: LossRecovery) throws(GStreamerError) {
        // Video only, as libwebrtc: Chromium refuses an offer with an RTX stream for audio
        // ("Failed to add remote stream ssrc … media_type: audio"); Opus has its own FEC and PLC.
        // Also undoes what `on-new-transceiver` set for this transceiver when its pad was requested.
        try transceiver.set(TransceiverProperty.doNack, recovery.retransmission && kind == .video)
        // RED/ULPFEC for Opus is not what libwebrtc does (it uses Opus's own in-band FEC).
        if recovery.forwardErrorCorrection, kind == .video {
            try transceiver.set(TransceiverProperty.fecType, .ulpRED)
            try transceiver.set(TransceiverProperty.fecPercentage, initialFECPercentage)
        }
    }
}

extension LossRecoverySetup {
    /// Opus as we offer it: our decoder uses Opus's in-band FEC (opusdec `use-inband-fec`), so the
    /// SDP says `useinbandfec=1` (RFC 7587), which is what turns libwebrtc's Opus FEC on toward us.
    /// (RED for audio is not offered: webrtcbin 1.22 pairs RED with ULPFEC parity, where
    /// libwebrtc's audio RED, `red/48000/2` with `111/111`, carries earlier Opus frames again.)
    static let offeredOpusCaps = "application/x-rtp,media=audio,encoding-name=OPUS,clock-rate=48000,payload=\(AudioCodec.payloadType),"
        + "encoding-params=(string)2,useinbandfec=(string)1"
}

/// One reading of rtpsession's `twcc-stats`.
struct TransportWideFeedback: Equatable {
    var packetsSent: Int
    var packetsReceived: Int
    var lossPercent: Double
    var receivedBitsPerSecond: Int
    var sentBitsPerSecond: Int
}

extension LossRecoverySetup {
    /// The extension id we offer transport-cc under: 1, because GStreamer 1.22's RED encoder
    /// (video with FEC) writes the sequence number of the packets it wraps under id 1 whatever
    /// was negotiated, so under any other id rtpsession never sees it on video and the feedback
    /// covers audio alone. (Answering an offer that uses another id, as Chromium's 3, keeps that
    /// limitation: the loss then comes from audio packets, the rate from our own count.)
    static let offeredTransportWideCCID = 1

    /// The id a remote offer gives transport-cc in `kind`'s section, if it offers it.
    static func transportWideCCID(in section: SDPMediaSection?) -> Int? {
        section?.extensions.first { $0.value == Element.transportWideCCURI }?.key
    }
}
