import GLibCore
import GStreamer
import MediaPipeline

/// The far end's sender reports on their way into a session's rtpbin, smoothed (see
/// `SenderReportSmoother`): a probe on each `recv_rtcp_sink_%u` pad webrtcbin requests.
///
/// It also tells how far apart the far end's audio and video leave webrtcbin, against when the
/// sender captured them (`audioVideoOffsetMs`), for the recording's stats sidecar: a probe on each
/// incoming stream keeps its newest packet's RTP time and timestamp.
final class SenderReportSmoothing: Sendable {
    private let smoother = Locked(SenderReportSmoother())
    private let probes = Locked<[PadProbe]>([])
    /// Per kind of incoming stream, its newest packet: SSRC, RTP time, timestamp (ns).
    private let newest = Locked<[MediaKind: (ssrc: UInt32, rtp: UInt32, pts: UInt64)]>([:])

    /// Audio minus video, in milliseconds, of each stream's timestamp less its capture time on
    /// the sender's clock: positive when the far end's audio comes out later than the video
    /// captured with it. Nil until both kinds have packets and sender reports.
    var audioVideoOffsetMs: Double? {
        let newest = newest.value
        guard let audio = newest[.audio], let video = newest[.video] else { return nil }
        return smoother.withLock { smoother in
            guard let audioSent = smoother.senderTime(ssrc: audio.ssrc, rtp: audio.rtp),
                  let videoSent = smoother.senderTime(ssrc: video.ssrc, rtp: video.rtp) else { return nil }
            return ((Double(audio.pts) / 1e9 - audioSent) - (Double(video.pts) / 1e9 - videoSent)) * 1000
        }
    }

    /// Keeps the newest packet of an incoming stream of `kind` leaving webrtcbin through `pad`.
    func watchIncoming(_ pad: Pad, kind: MediaKind) {
        let newest = self.newest
        let probe = pad.addBufferProbe(readingData: true) { info, bytes in
            guard let pts = info.pts, let bytes, bytes.count >= 12, bytes[0] >> 6 == 2 else { return .pass }
            let rtp = UInt32(bytes[4]) << 24 | UInt32(bytes[5]) << 16 | UInt32(bytes[6]) << 8 | UInt32(bytes[7])
            let ssrc = UInt32(bytes[8]) << 24 | UInt32(bytes[9]) << 16 | UInt32(bytes[10]) << 8 | UInt32(bytes[11])
            newest.withLock { $0[kind] = (ssrc, rtp, pts) }
            return .pass
        }
        probes.withLock { $0.append(probe) }
    }

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
