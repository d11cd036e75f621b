import Foundation
import GStreamer
import MediaPipeline

/// webrtcbin's states as observed, and the watch that notices what webrtcbin 1.22 does not: a far
/// end gone silent, a negotiated direction that carries nothing.
struct LivenessWatch {
    var states = ObservedStates()
    var watchdog: Task<Void, Never>?
    /// Reports a negotiated direction that carries nothing (see `MediaDirectionWatch`).
    var directionWatch = MediaDirectionWatch()
    /// The watch's last stats sample, of session `session`, for `stats(reusingWithin:)`.
    var lastSample: (stats: PeerStats, session: Int, at: ContinuousClock.Instant)?
    /// Ticks so far (see `needsStatsSample`).
    var ticks = 0
    /// When the far end last sent something, and how long it may stay silent.
    var silence = FarEndSilence()

    mutating func noteActivity() { silence.noteArrival(now: .now) }

    /// A new webrtcbin starts with fresh states, no expected directions and nothing heard.
    mutating func restart() {
        states = ObservedStates()
        directionWatch = MediaDirectionWatch()
        silence = FarEndSilence()
    }

    mutating func stopWatchdog() { watchdog?.cancel() }
}

extension PeerConnection {
    package var peerState: PeerState { liveness.states.unified }
    package var signalingState: SignalingState { liveness.states.signaling }
    package var iceConnectionState: ICEConnectionState { liveness.states.ice }
    package var iceGatheringState: ICEGatheringState { liveness.states.gathering }
    package var connectionState: ConnectionState { liveness.states.connection }

    func updateStates(_ snapshot: WebRTCStates) {
        let changes = liveness.states.take(snapshot)
        for change in changes {
            if case .connectionStateChanged(.connected) = change { liveness.silence.restart(now: .now) }
            emit(change)
        }
        publishUnifiedState()
    }

    func publishUnifiedState() {
        guard let unified = liveness.states.updateUnified() else { return }
        if unified == .connected { sendStartKeyFrames() }
        emit(.stateChanged(unified))
    }

    /// Video sent before both ends finished DTLS is dropped (the far end completes a moment
    /// after us), and a receiver that decodes only from a key frame and asks for none (aiortc)
    /// would wait for ever: every connection starts with key frames, the last when the far end
    /// is surely up.
    private func sendStartKeyFrames() {
        guard let media else { return }
        let number = session?.number
        Task { [weak self] in
            for delay in Self.startKeyFrameDelays {
                // Cancelled: the wait ends early and the loop or the guard after it decides.
                try? await Task.sleep(for: delay)
                guard let self, await self.session?.number == number, await !self.isClosed else { return }
                media.requestVideoKeyFrame()
            }
        }
    }

    static let startKeyFrameDelays: [Duration] = [.zero, .milliseconds(400), .milliseconds(1500)]

    func startWatchdog() {
        let configured = FarEndSilence.Bounds(disconnected: configuration.disconnectedAfter, failed: configuration.failedAfter)
        liveness.watchdog = Task { [weak self] in
            while !Task.isCancelled {
                // Cancelled: the wait ends early and the loop or the guard after it decides.
                try? await Task.sleep(for: .milliseconds(500))
                guard let self else { return }
                await self.checkLiveness(configured: configured)
            }
        }
    }

    /// webrtcbin 1.22 rarely notices a vanished peer, so we watch what the transport receives
    /// ourselves: silence while connected reports disconnected, then failed. Any packet counts
    /// (`PeerSession.packetsArrived`), so a far end that sends no media (a recording bot) stays
    /// alive by its receiver reports, and how long it may be silent follows how often it has
    /// sent (`FarEndSilence`); a stats sample is taken only for what needs one.
    private func checkLiveness(configured: FarEndSilence.Bounds) async {
        guard liveness.states.connection == .connected, let session else {
            liveness.directionWatch.pause(now: .now)
            return
        }
        for (direction, everCarried) in liveness.directionWatch.check(counts: session.packetsByDirection, now: .now) {
            emit(.mediaSilent(direction, everCarried: everCarried))
        }
        let now = ContinuousClock.now
        liveness.silence.take(arrivals: session.packetsArrived, now: now)
        let bounds = liveness.silence.bounds(configured: configured, farEnd: liveness.directionWatch.farEnd)
        liveness.states.stall = liveness.silence.stall(now: now, bounds: bounds)
        publishUnifiedState()
        liveness.ticks += 1
        guard needsStatsSample(session) else { return }
        // No stats (the session is being replaced or closed): the next tick looks again.
        guard let raw = try? await session.webrtc.stats(), session === self.session else { return }
        // One parse per tick serves the loss response, bandwidth adaptation and the frozen-picture watch.
        let kinds = streamKinds(of: session)
        var sample = statsSample(raw, kinds: kinds)
        let inbound = sample.inbound
        respondToLoss(totalLost: Self.packetsLostOnIncoming(raw), bytesReceived: inbound.reduce(UInt64(0)) { $0 + $1.bytesReceived },
                      kinds: kinds, session: session)
        // A packet is resent at most once a round trip (the last resend may still be on its way).
        session.retransmissions.noteRoundTrip(sample.roundTripTime)
        adaptBandwidth(to: sample, session: session)
        recoverFrozenPicture(videoBytesReceived: inbound.filter { $0.kind == .video }.reduce(0) { $0 + $1.bytesReceived },
                             session: session)
        sample.bandwidth = adaptation.bandwidth?.decision
        liveness.lastSample = (sample, session.number, .now)
    }

    /// True when a tick's stats sample has a reader: bandwidth adaptation (an encoder sending
    /// video) or the frozen-picture watch (a decoding branch) every tick, the loss response alone
    /// (retransmission on and media coming in: a recording bot) every other tick, which still
    /// notices loss within a second. A peer that only sends pre-encoded media reads none.
    /// `get-stats` is the watch's cost: webrtcbin walks every stream and builds a structure each
    /// time, and parsing it is most of what a recording bot's Swift side does per call.
    private func needsStatsSample(_ session: PeerSession) -> Bool {
        let parameters = configuration.media.parameters
        if parameters.lossRecovery.bandwidthAdaptation, parameters.videoCallEnabled, media?.graph.videoBitrate != nil { return true }
        if session.incomingBranches.contains(where: { $0.decodedPictures != nil }) { return true }
        return parameters.lossRecovery.retransmission && !session.incomingBranches.isEmpty && liveness.ticks % 2 == 0
    }
}
