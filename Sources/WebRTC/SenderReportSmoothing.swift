import GLibCore
import GStreamer

/// The far end's sender reports on their way into a session's rtpbin, smoothed (see
/// `SenderReportSmoother`): a probe on each `recv_rtcp_sink_%u` pad webrtcbin requests.
final class SenderReportSmoothing: Sendable {
    private let smoother = Locked(SenderReportSmoother())
    private let probes = Locked<[PadProbe]>([])

    /// Watches `webrtc`'s rtpbin for its RTCP inputs; the connection goes with the session's others.
    func watch(_ webrtc: WebRTCBin) throws(GStreamerError) -> SignalConnection {
        guard let rtpBin = webrtc.rtpBin else { throw .notSupported("webrtcbin has no rtpbin child to configure") }
        return try rtpBin.connect("pad-added") { [smoother = self.smoother, probes = self.probes] arguments in
            guard case .object(let pad as Pad) = arguments[1], pad.direction == .sink, pad.name.hasPrefix("recv_rtcp_sink_") else { return }
            let probe = pad.addBufferPatchProbe { packet in
                smoother.withLock { smoother in
                    SenderReportRewrite.patches(for: packet, smoother: &smoother).map { BufferPatch(offset: $0.offset, bytes: $0.bytes) }
                }
            }
            probes.withLock { $0.append(probe) }
        }
    }

    /// Takes the probes off (the session is being torn down).
    func release() {
        for probe in probes.withLock({ probes in defer { probes = [] }; return probes }) { probe.cancel() }
    }
}
