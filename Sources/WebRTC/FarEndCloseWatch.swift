import GStreamer
import Synchronization

/// Notices the far end closing its RTCPeerConnection, which webrtcbin 1.22 does not report.
///
/// What a closing browser (or aiortc) sends, and what webrtcbin 1.22 makes of it
/// (docs/protocol.md §8.7):
/// - DTLS close_notify: dtlsdec's connection ends its stream (GST_FLOW_EOS) but its
///   `connection-state`, and so the DTLS transport's `state`, turns `closed` only once this side
///   sent its own close_notify too, which it does only when it shuts down; `connection-state`
///   stays `connected`.
/// - SCTP ABORT (before close_notify): the association's end closes the data channels that are
///   open (when the channel was the far end's, as with PeerJS's callee, not always).
/// - RTCP BYE: rtpbin's `on-bye-ssrc`, for media only, and not sent by every stack.
/// - ICE: no consent freshness in libnice as webrtcbin 1.22 sets it up: nothing for ~30 s.
/// So the watch reads the far end's datagrams as they arrive (the nicesrc's output): a DTLS alert
/// record after the handshake (epoch 1 or later: encrypted, so close_notify or a fatal alert,
/// either of which ends the association) is the far end's close, reported once.
final class FarEndCloseWatch: Sendable {
    static let alertRecord: UInt8 = 21
    private let reported = Atomic<Bool>(false)
    private let onClose: @Sendable (String) -> Void

    init(onClose: @escaping @Sendable (String) -> Void) { self.onClose = onClose }

    /// Watches what `pad` (a transport's nicesrc output) brings; `onClose` is called once.
    static func attach(to pad: Pad, onClose: @escaping @Sendable (String) -> Void) -> PadProbe {
        let watch = FarEndCloseWatch(onClose: onClose)
        return pad.addBufferProbe(readingData: true) { _, bytes in
            guard let bytes else { return .pass }
            return watch.received(bytes) ? .pass : .remove
        }
    }

    /// A datagram from the far end; false once the close was reported (the probe can go).
    func received(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard !reported.load(ordering: .relaxed) else { return false }
        guard Self.isPostHandshakeAlert(bytes) else { return true }
        guard reported.compareExchange(expected: false, desired: true, ordering: .relaxed).exchanged else { return false }
        onClose("the far end closed its connection (a DTLS alert after the handshake: close_notify)")
        return false
    }

    /// Whether the datagram is DTLS (RFC 7983: first byte 20–63) and carries an alert record of
    /// epoch 1 or later.
    static func isPostHandshakeAlert(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard let first = bytes.first, (20...63).contains(first) else { return false }
        return DTLSRecord.all(in: bytes).contains { $0.type == alertRecord && $0.epoch >= 1 }
    }
}
