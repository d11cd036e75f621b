import Foundation
import GStreamer
import MediaPipeline
import MediaRuntime

/// Bandwidth adaptation: every liveness tick reads the far end's receiver reports for our video,
/// folds them into the `BandwidthEstimator`, and applies a changed decision to the encoders
/// (video bitrate and frame-rate cap, the video FEC share, Opus's expected loss).
extension PeerConnection {
    /// Raises the RTCP allowance and lengthens the jitter buffer while incoming packets go
    /// missing (see `LossResponse`).
    func respondToLoss(totalLost: Int, session: PeerSession) {
        guard configuration.media.parameters.lossRecovery.retransmission else { return }
        if lossResponse == nil {
            lossResponse = LossResponse(rtcpMinInterval: configuration.rtcpMinInterval,
                                        jitterBufferLatencyMs: configuration.jitterBufferLatencyMs)
        }
        guard let feedback = lossResponse?.update(totalLost: totalLost, at: ProcessInfo.processInfo.systemUptime) else { return }
        do throws(GStreamerError) {
            try session.applyFeedback(feedback)
        } catch {
            emit(.error("loss response: \(error)"))
        }
    }

    /// Packets that never arrived on the incoming streams so far, as their RTP sources count them
    /// (webrtcbin 1.22's own `packets-lost` of `inbound-rtp` stays 0: it reads a jitter buffer it
    /// does not find).
    static func packetsLostOnIncoming(_ raw: Structure) -> Int {
        raw.fields.compactMap { $0.value.structureValue }.filter { $0.name == "inbound-rtp" }.reduce(0) { total, entry in
            total + max(0, entry.structure("gst-rtpsource-stats")?.int("packets-lost") ?? entry.int("packets-lost") ?? 0)
        }
    }

    func adaptBandwidth(to raw: Structure, session: PeerSession) {
        let parameters = configuration.media.parameters
        guard parameters.lossRecovery.bandwidthAdaptation, parameters.videoCallEnabled, let media else { return }
        let kinds = negotiation.sdpKinds.merging(session.ssrcKinds) { _, fromPads in fromPads }
        let stats = PeerStats(raw: raw, kinds: kinds, timestamp: ProcessInfo.processInfo.systemUptime)
        guard let video = stats.outbound.first(where: { $0.kind == .video }) else { return }
        if bandwidth == nil {
            let ceiling = media.videoBitrateKbps ?? parameters.effectiveVideoMaxBitrateKbps
            bandwidth = BandwidthEstimator(
                settings: .init(minKbps: parameters.lossRecovery.minVideoBitrateKbps, maxKbps: ceiling,
                                lowRateFloorKbps: parameters.lossRecovery.lowRateFloorKbps),
                frameRate: parameters.effectiveVideoFps)
        }
        let report = BandwidthEstimator.Report(time: stats.timestamp, bytesSent: video.bytesSent,
                                               fractionLost: video.fractionLost, roundTripTime: video.roundTripTime)
        guard let decision = bandwidth?.update(report) else { return }
        apply(decision, media: media, session: session)
        emit(.bandwidthChanged(decision))
    }

    private func apply(_ decision: BandwidthEstimator.Decision, media: SendMedia, session: PeerSession) {
        do throws(MediaRuntimeError) {
            // The parity packets ride in the same budget as the picture.
            let videoKbps = decision.targetKbps * 100 / (100 + decision.fecPercentage)
            try media.setVideoBitrate(kbps: max(1, videoKbps), requestKeyFrame: false)
            try media.setMaxVideoFrameRate(decision.maxFrameRate)
            if configuration.media.parameters.lossRecovery.forwardErrorCorrection {
                do throws(GStreamerError) { try session.setVideoFECPercentage(decision.fecPercentage) } catch {
                    emit(.error("bandwidth adaptation: cannot set the FEC share: \(error)"))
                }
            }
            // A call without audio has nothing to tell.
            try? media.setExpectedAudioLoss(percent: decision.audioLossPercentage)
        } catch {
            emit(.error("bandwidth adaptation: \(error)"))
        }
    }
}
