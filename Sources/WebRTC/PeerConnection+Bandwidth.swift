import Foundation
import GStreamer
import MediaPipeline
import MediaRuntime

/// The answer to what the path does: the receiving side's answer to loss (`LossResponse`), the
/// frozen-picture watch, and the sender's rate control (`BandwidthEstimator`).
struct Adaptation {
    /// The receiving side's answer to loss (see `LossResponse`); nil without retransmission.
    var lossResponse: LossResponse?
    /// Asks again for a key frame while the far end's picture stays frozen (see `FrozenPictureWatch`).
    var pictureWatch = FrozenPictureWatch()
    /// The sender's rate control (see `adaptBandwidth`); nil when adaptation is off or no video is sent.
    var bandwidth: BandwidthEstimator?
    var lastTransportWideFeedback: TransportWideFeedback?
    /// The decision the encoders run with now.
    var appliedBandwidth: BandwidthEstimator.Decision?

    /// A new webrtcbin starts with the configured feedback settings; the rate control goes on.
    mutating func restart() {
        lossResponse = nil
        pictureWatch = FrozenPictureWatch()
    }
}

/// Bandwidth adaptation: every liveness tick reads the far end's receiver reports for our video,
/// folds them into the `BandwidthEstimator`, and applies a changed decision to the encoders
/// (video bitrate and frame-rate cap, the video FEC share, Opus's expected loss).
extension PeerConnection {
    /// The frozen-picture watch, for tests that count its requests.
    var pictureWatch: FrozenPictureWatch { adaptation.pictureWatch }
    /// The queue the far end's transport-wide feedback shows in front of the bottleneck, seconds
    /// (nil before any came), for tests that watch the rate control read it.
    var standingQueue: Double? { adaptation.bandwidth?.standingQueue }

    /// Raises the RTCP allowance and lengthens the jitter buffer while incoming packets go
    /// missing (see `LossResponse`).
    func respondToLoss(totalLost: Int, bytesReceived: UInt64, kinds: [UInt: MediaKind], session: PeerSession) {
        guard configuration.media.parameters.lossRecovery.retransmission else { return }
        do throws(GStreamerError) { try session.askForResends(kinds: kinds) } catch { emit(.error("loss response: \(error)")) }
        changeFeedback(of: session) { $0.update(totalLost: totalLost, bytesReceived: bytesReceived, at: $1) }
    }

    /// A key-frame request is leaving for the far end: RTCP goes quick for a while, so this one
    /// and the next are not held for the calm report interval (see `LossResponse`). Part of the
    /// loss response: only its ticks (`respondToLoss`) bring RTCP back to the calm pace.
    func hurryFeedback(session: PeerSession) {
        guard configuration.media.parameters.lossRecovery.retransmission else { return }
        changeFeedback(of: session) { $0.keyFrameWanted(at: $1) }
    }

    /// Runs `change` on the loss response (made with the configured settings on first use) at the
    /// current time, and applies the feedback settings it returns, set against the ones before.
    private func changeFeedback(of session: PeerSession, _ change: (inout LossResponse, Double) -> LossResponse.Feedback?) {
        var response = adaptation.lossResponse ?? LossResponse(rtcpMinInterval: configuration.rtcpMinInterval,
                                                    jitterBufferLatencyMs: configuration.jitterBufferLatencyMs)
        defer { adaptation.lossResponse = response }
        let previous = response.current
        guard let feedback = change(&response, ProcessInfo.processInfo.systemUptime) else { return }
        do throws(GStreamerError) {
            try session.applyFeedback(feedback, previous: previous)
        } catch {
            emit(.error("loss response: \(error)"))
        }
    }

    /// Asks every decoding video branch for a key frame when video bytes arrived since the last
    /// tick and none of them decoded a picture.
    func recoverFrozenPicture(videoBytesReceived: UInt64, session: PeerSession) {
        let decoding = session.incomingBranches.filter { $0.decodedPictures != nil }
        guard !decoding.isEmpty else { return }
        let pictures = decoding.reduce(0) { $0 + ($1.decodedPictures ?? 0) }
        guard adaptation.pictureWatch.update(videoBytesReceived: videoBytesReceived, picturesDecoded: pictures) else { return }
        for branch in decoding { branch.requestKeyFrame() }
    }

    /// Packets that never arrived on the incoming streams so far, as their RTP sources count them
    /// (webrtcbin 1.22's own `packets-lost` of `inbound-rtp` stays 0: it reads a jitter buffer it
    /// does not find).
    static func packetsLostOnIncoming(_ raw: Structure) -> Int {
        raw.fields.compactMap { $0.value.structureValue }.filter { $0.name == "inbound-rtp" }.reduce(0) { total, entry in
            total + max(0, entry.structure("gst-rtpsource-stats")?.int("packets-lost") ?? entry.int("packets-lost") ?? 0)
        }
    }

    /// The send graph's encoder, when bandwidth adaptation drives it (pre-encoded video has no
    /// encoder whose rate could follow the estimate).
    private var adaptedMedia: SendMedia? {
        let parameters = configuration.media.parameters
        guard parameters.lossRecovery.bandwidthAdaptation, parameters.videoCallEnabled, let media, media.graph.videoBitrate != nil else { return nil }
        return media
    }

    /// Starts the rate control before the first frame is encoded, with the encoder at the
    /// estimator's start rate: the configured bitrate is the ceiling it probes up to, not where
    /// it begins (see `BandwidthEstimator`). Once per peer; a rebuilt session keeps the rate.
    func startBandwidthAdaptation() {
        guard adaptation.bandwidth == nil, let media = adaptedMedia else { return }
        let parameters = configuration.media.parameters
        let ceiling = (media.videoBitrateKbps ?? parameters.effectiveVideoMaxBitrateKbps) + Self.audioAllowanceKbps
        let estimator = BandwidthEstimator(
            settings: .init(minKbps: parameters.lossRecovery.minVideoBitrateKbps + Self.audioAllowanceKbps, maxKbps: ceiling,
                            lowRateFloorKbps: parameters.lossRecovery.lowRateFloorKbps + Self.audioAllowanceKbps),
            frameRate: parameters.effectiveVideoFps)
        // Not yet `appliedBandwidth`: the first decision applies every control, Opus's loss too.
        adaptation.bandwidth = estimator
        do throws(MediaRuntimeError) {
            try media.setVideoBitrate(kbps: Self.videoKbps(for: estimator.decision), requestKeyFrame: false)
        } catch {
            emit(.error("bandwidth adaptation: cannot set the start rate: \(error)"))
        }
    }

    func adaptBandwidth(to stats: PeerStats, session: PeerSession) {
        guard let media = adaptedMedia else { return }
        guard stats.outbound.contains(where: { $0.kind == .video }) else { return }
        startBandwidthAdaptation()
        // Every stream shares the one bundled transport, so the path's loss and delay are whatever
        // any report says: transport-wide feedback when the far end sends it (its rates count only
        // the packets that carry the sequence number, which webrtcbin's RED encoder drops from
        // video under any id but 1: its rates then cover audio alone and are not used), else the receiver
        // reports (webrtcbin 1.22 keeps the far end's report on one of our streams only,
        // whichever came last) and the resend requests; the rate is everything we send.
        var reported: [UInt: BandwidthEstimator.ReportedStream] = [:]
        for stream in stats.outbound {
            reported[stream.ssrc] = .init(packetsSent: stream.packetsSent, packetsLost: stream.remotePacketsLost, nacks: stream.nackCount)
        }
        // rtpsession keeps its last reading when feedback stops (the far end hears nothing, or
        // its feedback is lost): the same reading twice says nothing new.
        let reading = session.transportWideFeedback
        let feedback = reading == adaptation.lastTransportWideFeedback ? nil : reading
        adaptation.lastTransportWideFeedback = reading
        let report = BandwidthEstimator.Report(time: stats.timestamp, bytesSent: stats.outbound.reduce(0) { $0 + $1.bytesSent },
                                               reported: reported, roundTripTime: stats.roundTripTime,
                                               transportPackets: feedback.map {
                                                   .init(sent: $0.packetsSent, lost: max(0, $0.packetsSent - $0.packetsReceived),
                                                         sentKbps: Double($0.sentBitsPerSecond) / 1000, receivedKbps: Double($0.receivedBitsPerSecond) / 1000)
                                               })
        guard let decision = adaptation.bandwidth?.update(report) else { return }
        apply(decision, media: media, session: session)
        emit(.bandwidthChanged(decision))
    }

    /// Folds one transport-wide feedback message into the rate control as it comes (see
    /// `BandwidthEstimator.update(feedback:at:)`), between the half-second stats readings, and
    /// applies a changed decision at once.
    func adaptBandwidth(toFeedback packets: [TransportFeedbackPacket], session: PeerSession) {
        guard let media = adaptedMedia, adaptation.bandwidth != nil else { return }
        let feedback = packets.map { packet in
            BandwidthEstimator.FeedbackPacket(sent: Double(packet.sentNanoseconds) / 1e9,
                                              arrived: packet.arrivedNanoseconds.map { Double($0) / 1e9 })
        }
        guard let decision = adaptation.bandwidth?.update(feedback: feedback, at: ProcessInfo.processInfo.systemUptime) else { return }
        apply(decision, media: media, session: session)
        emit(.bandwidthChanged(decision))
    }

    /// What the estimate leaves for audio, retransmissions and RTCP before video gets the rest
    /// (Opus voice at its default rate plus headroom).
    static let audioAllowanceKbps = 80

    /// The video encoder's share of a decision's target: audio's allowance off, and the parity
    /// packets ride in the same budget as the picture.
    static func videoKbps(for decision: BandwidthEstimator.Decision) -> Int {
        max(1, max(1, decision.targetKbps - audioAllowanceKbps) * 100 / (100 + decision.fecPercentage))
    }

    /// Applies what changed since the last decision: each control reconfigures something (a new
    /// frame rate restarts the encoder), so an unchanged one is left alone.
    private func apply(_ decision: BandwidthEstimator.Decision, media: SendMedia, session: PeerSession) {
        let previous = adaptation.appliedBandwidth
        adaptation.appliedBandwidth = decision
        session.retransmissions.follow(targetKbps: decision.targetKbps)
        do throws(MediaRuntimeError) {
            if decision.targetKbps != previous?.targetKbps || decision.fecPercentage != previous?.fecPercentage {
                try media.setVideoBitrate(kbps: Self.videoKbps(for: decision), requestKeyFrame: false)
            }
            if decision.maxFrameRate != (previous?.maxFrameRate ?? nil) { try media.setMaxVideoFrameRate(decision.maxFrameRate) }
            if decision.fecPercentage != previous?.fecPercentage, configuration.media.parameters.lossRecovery.forwardErrorCorrection {
                do throws(GStreamerError) { try session.setVideoFECPercentage(decision.fecPercentage) } catch {
                    emit(.error("bandwidth adaptation: cannot set the FEC share: \(error)"))
                }
            }
            if decision.audioLossPercentage != previous?.audioLossPercentage {
                // A call without audio has nothing to tell.
                try? media.setExpectedAudioLoss(percent: decision.audioLossPercentage)
            }
        } catch {
            emit(.error("bandwidth adaptation: \(error)"))
        }
    }
}
