import CallEngine
import ECV
import ECVProtocol
import Foundation
import MediaPipeline
import MediaRuntime
import WebRTC

extension MediaConnection {
    static let controlChannelLabel = "ecv-peer-call"

    /// Builds the call's leg for `stream` and starts it: the caller offers (with the closing
    /// channel), the callee applies the offer that came with the call.
    func start(stream: MediaStream?) async {
        let claimed = state.withLock { state -> Bool in
            guard !state.started, !state.closed else { return false }
            state.started = true
            state.localStream = stream
            return true
        }
        guard claimed else { return }
        let constraints = stream?.constraints ?? MediaConstraints()
        var media = MediaConfiguration(parameters: constraints.parameters, video: constraints.videoInputs,
                                       audio: constraints.audioFlag ? constraints.microphone : .silence,
                                       receiveVideo: .renderer(name: MediaConfiguration.remoteVideoSink), receiveAudio: .discard,
                                       sendsMedia: stream != nil,
                                       localPreview: stream != nil && constraints.videoFlag ? MediaConfiguration.localPreviewSink : nil)
        if stream == nil { media.parameters.videoCallEnabled = true }
        let control = DataChannelConfig(enabled: true, label: Self.controlChannelLabel)
        var plan = CallLegPlan(peer: peerConfiguration(ice: ice(), media: media))
        plan.createdChannels = outgoing ? [control] : []
        plan.boundChannels = plan.createdChannels
        // A PeerJS call that fails is over: the far end does not offer again.
        plan.rebuildsWhenFailed = false
        plan.remoteVideo = arrivingStream.feed
        // The first call sending a local stream feeds its preview.
        if let stream, stream.party == .local, stream.added(sender: self) { plan.localPreview = stream.feed }
        let leg = CallLeg(plan: plan, signaling: signaling, observer: self)
        let adopted = state.withLock { state -> Bool in
            guard !state.closed else { return false }
            state.leg = leg
            return true
        }
        guard adopted else { return }
        do { try await leg.start() } catch {
            guard !leg.isClosed else { return }
            await end(error: PeerError(legFailure: error, starting: "the call's media"))
        }
    }

    /// An OFFER, ANSWER or CANDIDATE of this connection from the other peer, to the call's leg in
    /// arrival order (what comes before the leg runs waits for it).
    func receive(_ message: PeerJSMessage) async {
        guard let converted = ConnectionSignaling.incoming(message, from: peer, report: { hub.emit(.error($0)) }) else { return }
        signaling.deliver(converted)
    }

    private func handle(_ event: WebRTC.PeerEvent) async {
        switch event {
        case .remoteStream(let remote):
            let first = state.withLock { state -> Bool in
                defer { state.remoteStream = arrivingStream }
                return state.remoteStream == nil
            }
            arrivingStream.noteRemote(remote.kind)
            if first { hub.emit(.stream(arrivingStream)) }
        case .remoteDataChannel(let handle):
            watchClosing(handle)
        case .stateChanged(.connected):
            state.withLock { $0.open = true }
        case .stateChanged(.failed):
            await end(error: PeerError(.webrtc, "the connection to \(peer) failed (no media or ICE for too long)"))
        case .farEndClosed:
            // PeerJS hangs up by closing its RTCPeerConnection: its DTLS close_notify ends the call.
            await end(error: nil, farEndGone: true)
        case .noCommonCodec(let kind, let ours, let theirs):
            await end(error: PeerError(.negotiationFailed, NoCommonCodec.message(kind: kind.rawValue, ours: ours, theirs: theirs)))
        case .error(let message):
            Logger.debug("[peer call \(connectionId)] webrtc: \(message)")
        default:
            break
        }
    }

    /// The closing channel: when it closes, or says `close`, the other side ended the call.
    private func watchClosing(_ handle: DataChannelHandle) {
        guard state.withLock({ state in defer { if state.control == nil { state.control = handle } }; return state.control == nil }) else { return }
        let events = handle.events()
        tasks.run { [weak self] in
            for await event in events where event == .closed || event == .text(MediaConnection.closeNotice) {
                await self?.end(error: nil)
                return
            }
        }
    }

    /// Said on the closing channel before it closes, so the far end hears of the end even when the
    /// channel's own close is lost (PeerJS ignores messages on this channel).
    static let closeNotice = "close"

    /// Gives this call's send graph the local stream's mute states and camera, in the leg's
    /// order of operations.
    func applySendState() async {
        guard let stream = state.withLock({ $0.localStream }), let leg = state.withLock({ $0.leg }) else { return }
        let (audio, video, camera) = stream.sendState
        let sendState = SendState(audioEnabled: audio && stream.constraints?.audioFlag != false, videoEnabled: video,
                                  camera: stream.constraints?.cameras.back != nil ? camera.rawValue : nil)
        leg.inControlOrder { [hub, peer] media in
            guard let media else { return }
            do throws(MediaRuntimeError) { try CallLeg.apply(sendState, to: media) } catch {
                hub.emit(.error(PeerError(.webrtc, "cannot apply the stream's tracks to the call with \(peer): \(error)")))
            }
        }
        await leg.controlsApplied()
    }

    /// The other peer left the server (`LEAVE`) or could not be reached (`EXPIRE`).
    func remoteGone(_ error: PeerError?) async { await end(error: error) }

    /// Ends this side: the recording is finalised while the media runs, the closing channel and
    /// the peer connection close, CLOSE is reported. Idempotent.
    /// - Parameter farEndGone: the far end closed its peer connection: nobody is left to tell.
    func end(error: PeerError?, farEndGone: Bool = false) async {
        let taken = state.withLock { state -> MediaConnection.State? in
            guard !state.closed else { return nil }
            state.closed = true
            return state
        }
        guard let taken else { return }
        if let error { hub.emit(.error(error), lasting: true) }
        tasks.cancelAll()
        taken.localStream?.removed(sender: self)
        // The closing channel says so before it closes, and closes completely: the far end hears
        // of the end. The caller's is the leg's, closed after the recording; the callee's was
        // adopted from the caller, and closes first.
        let control = farEndGone ? nil : taken.control
        if let control, taken.leg?.channels.contains(where: { $0 === control }) != true { await Self.closeTelling(control) }
        let finalised = await taken.leg?.close(sendBye: false) { channel in
            if channel === control { await Self.closeTelling(channel) } else { channel.close() }
        }
        if case .failure(let recordingError)? = finalised {
            hub.emit(.error(PeerError.recording("the recording was not finalised: \(recordingError)")))
        }
        hub.emit(.close)
        hub.finish()
        onEnded(self)
    }
}

extension MediaConnection {
    static func closeTelling(_ control: DataChannelHandle) async {
        await sayClosing(on: control, .text(closeNotice))
        await closeCompletely(control)
    }
}

/// Sends `notice` on an open channel and waits (up to half a second) until it left, so closing
/// the connection right after does not drop it.
func sayClosing(on channel: DataChannelHandle, _ notice: DataChannelHandle.Message) async {
    guard channel.isOpen else { return }
    do { try channel.send(notice) } catch { return } // closed meanwhile: nobody to tell
    let deadline = ContinuousClock.now + .milliseconds(500)
    while channel.bufferedAmount > 0, ContinuousClock.now < deadline {
        do { try await Task.sleep(for: .milliseconds(10)) } catch { return } // cancelled: close now
    }
    do { try await Task.sleep(for: .milliseconds(20)) } catch { return } // cancelled: close now
}

/// Closes `channel` and waits (up to a second) for its close to complete: closing the peer
/// connection at once would tear the association down before the far end hears of it (webrtcbin
/// 1.22 then never tells the far end's channel, when the closing side had created it).
func closeCompletely(_ channel: DataChannelHandle) async {
    guard channel.isOpen else { channel.close(); return }
    let events = channel.events()
    channel.close()
    let waiter = Task { for await event in events where event == .closed { return } }
    let timeout = Task {
        do { try await Task.sleep(for: .seconds(1)) } catch { return } // cancelled: the close completed first
        waiter.cancel()
    }
    await waiter.value
    timeout.cancel()
}

extension WebRTC.PeerError {
    var isUnsupported: Bool { if case .unsupported = self { true } else { false } }
}

extension MediaConnection: CallLegObserver {
    package func leg(_ leg: CallLeg, completed step: CallLegStep) async {
        guard case .mediaStarted(let channels) = step else { return }
        if let control = channels.first { watchClosing(control) }
        if state.withLock({ $0.localStream })?.party == .local { await applySendState() }
    }

    package func leg(_ leg: CallLeg, observed event: CallLegEvent) async {
        if case .peer(let peerEvent) = event { await handle(peerEvent) }
    }
}
