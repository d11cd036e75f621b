import ECV
import ECVProtocol
import Foundation
import MediaPipeline
import WebRTC

extension MediaConnection {
    static let controlChannelLabel = "ecv-peer-call"

    /// Builds the peer connection for `stream` and starts it: the caller offers (with the closing
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
                                       receiveVideo: .renderer(name: "remote_video"), receiveAudio: .discard,
                                       sendsMedia: stream != nil,
                                       localPreview: stream != nil && constraints.videoFlag ? "local_preview" : nil)
        if stream == nil { media.parameters.videoCallEnabled = true }
        let signaling = self.signaling
        let ice = self.ice()
        if let refusal = ice.refusal { await end(error: refusal); return }
        let pc = PeerConnection(configuration: peerConfiguration(ice: ice, media: media),
                                role: outgoing ? .offerer : .answerer) { message in signaling.relay(message) }
        let events = pc.events()
        let adopted = state.withLock { state -> Bool in
            guard !state.closed else { return false }
            state.inbox.peerConnection = pc
            return true
        }
        guard adopted else { await pc.close(); return }
        keep(Task { [weak self] in
            for await event in events {
                guard let self else { return }
                await self.handle(event)
            }
        })
        let control = DataChannelConfig(enabled: true, label: Self.controlChannelLabel)
        do throws(WebRTC.PeerError) { try await pc.start(dataChannels: outgoing ? [control] : []) } catch {
            await end(error: PeerError(error.isUnsupported ? .invalidArgument : .webrtc, "the call's media did not start: \(error)"))
            return
        }
        if outgoing { watchClosing(await pc.openDataChannel(control)) }
        if let stream, stream.party == .local {
            if stream.added(sender: self), let preview = await pc.media?.appSink(named: "local_preview") { stream.feed.attach(preview) }
            await applySendState()
        }
        let waiting = state.withLock { state in defer { state.inbox.waiting = [] }; return state.inbox.waiting }
        for message in waiting { await pc.receive(message) }
    }

    /// An OFFER, ANSWER or CANDIDATE of this connection from the other peer.
    func receive(_ message: PeerJSMessage) async {
        guard let converted = ConnectionSignaling.incoming(message, from: peer, report: { hub.emit(.error($0)) }) else { return }
        let pc = state.withLock { $0.closed ? nil : $0.inbox.route(converted) }
        await pc?.receive(converted)
    }

    private func handle(_ event: WebRTC.PeerEvent) async {
        switch event {
        case .remoteStream(let remote):
            let (stream, first) = state.withLock { state -> (MediaStream, Bool) in
                if let existing = state.remoteStream { return (existing, false) }
                let created = MediaStream(remote: ())
                state.remoteStream = created
                return (created, true)
            }
            stream.noteRemote(remote.kind)
            if remote.kind == .video, let sink = remote.appSink { stream.feed.attach(sink) }
            if first { hub.emit(.stream(stream)) }
        case .remoteDataChannel(let handle):
            watchClosing(handle)
        case .stateChanged(.connected):
            state.withLock { $0.open = true }
        case .stateChanged(.failed):
            await end(error: PeerError(.webrtc, "the connection to \(peer) failed (no media or ICE for too long)"))
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
        keep(Task { [weak self] in
            for await event in events where event == .closed || event == .text(MediaConnection.closeNotice) {
                await self?.end(error: nil)
                return
            }
        })
    }

    /// Said on the closing channel before it closes, so the far end hears of the end even when the
    /// channel's own close is lost (PeerJS ignores messages on this channel).
    static let closeNotice = "close"

    /// Gives this call's send graph the local stream's mute states and camera.
    func applySendState() async {
        guard let stream = state.withLock({ $0.localStream }), let pc = state.withLock({ $0.inbox.peerConnection }) else { return }
        let (audio, video, camera) = stream.sendState
        guard let media = await pc.media else { return }
        do {
            try media.setAudioMuted(!audio || stream.constraints?.audioFlag == false)
            try media.setVideoMuted(!video)
            if stream.constraints?.cameras.back != nil, media.activeCamera != camera.rawValue { try media.switchCamera(to: camera.rawValue) }
        } catch {
            hub.emit(.error(PeerError(.webrtc, "cannot apply the stream's tracks to the call with \(peer): \(error)")))
        }
    }

    /// The other peer left the server (`LEAVE`) or could not be reached (`EXPIRE`).
    func remoteGone(_ error: PeerError?) async { await end(error: error) }

    /// Ends this side: the recording is finalised while the media runs, the closing channel and
    /// the peer connection close, CLOSE is reported. Idempotent.
    func end(error: PeerError?) async {
        let taken = state.withLock { state -> MediaConnection.State? in
            guard !state.closed else { return nil }
            state.closed = true
            defer { state.tasks = []; state.recording = nil; state.inbox.peerConnection = nil; state.inbox.waiting = [] }
            return state
        }
        guard let taken else { return }
        if let error { hub.emit(.error(error), lasting: true) }
        if let recording = taken.recording {
            do { _ = try await recording.stop() } catch {
                hub.emit(.error(PeerError(.recording, "the recording was not finalised: \(error)")))
            }
        }
        taken.localStream?.removed(sender: self)
        if let control = taken.control {
            await sayClosing(on: control, .text(Self.closeNotice))
            await closeCompletely(control)
        }
        await taken.inbox.peerConnection?.close()
        for task in taken.tasks { task.cancel() }
        hub.emit(.close)
        hub.finish()
        onEnded(self)
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
