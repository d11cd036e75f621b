import ECVProtocol
import Foundation
import GStreamer
import MediaPipeline
import Synchronization
import WebRTC
import GLibCore

/// The media side of a call (the seed's `WebRtcConnection`): joins the call's room, connects a
/// real WebRTC peer, renders frames, carries the text channel, and offers the call controls.
public final class WebRtcConnection: Sendable {
    public let parameters: ConnectParameters
    let call: VideoCall
    let localFeed = RendererFeed()
    let remoteFeed = RendererFeed()

    struct Setup {
        var video: VideoInputs = .cameras(front: .testPattern(pattern: "smpte"), back: .testPattern(pattern: "ball"))
        var audio: AudioSourceSpec = .testTone()
        var remoteAudio: ReceiveSinkSpec = .playback
        var localPreview = true
        var flashlight: (any FlashlightHandler)?
        var started = false
    }
    let setup = Mutex(Setup())

    struct Live {
        var room: RoomSignaling?
        var peer: PeerConnection?
        var textChannel: DataChannelHandle?
        var tasks: [Task<Void, Never>] = []
        var connectedOnce = false
        var connected = false
        var closed = false
        var recoveryDeadline: Task<Void, Never>?
        var recording: ActiveRecording?
        /// "audio"/"video" → codec and payload type agreed with the remote, e.g. "VP8/97".
        var negotiatedCodecs: [String: String] = [:]
        /// The kinds of media the agent's side has sent so far.
        var remoteKinds: Set<MediaKind> = []
    }
    let live = Mutex(Live())

    /// The codec and payload type each kind of media was negotiated with ("audio"/"video" →
    /// "OPUS/111", "H264/102"), from the last completed offer/answer; also in the
    /// `WebRtcConnected` event's data as `audioCodec`/`videoCodec`.
    public var negotiatedCodecs: [String: String] { live.withLock { $0.negotiatedCodecs } }

    /// Media controls' state: what the app asked for, and what hold and photo mode impose.
    struct Controls {
        var audioEnabled = true
        var videoEnabled = true
        var onHold = false
        var cameraBeforePhoto: String?
        /// Whether the agent's sound is played here (`remoteStream.setAudioEnabled(_:)`).
        var remoteAudioEnabled = true
    }
    let controls = Mutex(Controls())

    init(call: VideoCall, parameters: ConnectParameters) {
        self.call = call
        self.parameters = parameters
        InstanceCounter.increment("WebRtcConnection")
    }

    deinit { InstanceCounter.decrement("WebRtcConnection") }

    // MARK: Configuration (before startRoom)

    /// Receives the local picture as sent (after mute), RGBA.
    public var localVideoRenderer: (any VideoRenderer)? {
        get { localFeed.current }
        set { localFeed.current = newValue }
    }

    /// Receives the agent's decoded picture, RGBA.
    public var remoteVideoRenderer: (any VideoRenderer)? {
        get { remoteFeed.current }
        set { remoteFeed.current = newValue }
    }

    /// The camera: any video source; give front and back for `switchCamera()` and photo mode.
    /// Default: SMPTE bars (front) and a moving ball (back).
    public var videoSource: VideoInputs {
        get { setup.withLock { $0.video } }
        set { setup.withLock { $0.video = newValue } }
    }

    /// The microphone: any audio source. Default: a 440 Hz test tone.
    public var audioSource: AudioSourceSpec {
        get { setup.withLock { $0.audio } }
        set { setup.withLock { $0.audio = newValue } }
    }

    /// Where the agent's audio goes. Default: the speaker (`useSpeakerPhone`), or a clock-synced
    /// sink on machines without an audio device.
    public var remoteAudioSink: ReceiveSinkSpec {
        get { setup.withLock { $0.remoteAudio } }
        set { setup.withLock { $0.remoteAudio = newValue } }
    }

    /// Whether the local preview branch exists (needed for `localVideoRenderer`). Default true.
    public var localPreviewEnabled: Bool {
        get { setup.withLock { $0.localPreview } }
        set { setup.withLock { $0.localPreview = newValue } }
    }

    /// The torch. Without one, agents' flash requests are answered `UNAVAILABLE`.
    public var flashlightHandler: (any FlashlightHandler)? {
        get { setup.withLock { $0.flashlight } }
        set { setup.withLock { $0.flashlight = newValue } }
    }

    /// What this caller sends: renderer, mute, track info (the seed's `localStream`). A view onto
    /// the connection: every read gives the current state.
    public var localStream: MediaStream { MediaStream(party: .local, connection: self, feed: localFeed) }
    /// What the agent sends (the seed's `remoteStream`); its tracks appear as the media arrives.
    public var remoteStream: MediaStream { MediaStream(party: .remote, connection: self, feed: remoteFeed) }

    /// The peer connection, once `startRoom()` created it (advanced use: stats, DOT dumps).
    public var peerConnection: PeerConnection? { live.withLock { $0.peer } }
    /// The text channel, once created.
    public var textChannel: DataChannelHandle? { live.withLock { $0.textChannel } }
    public var isConnected: Bool { live.withLock { $0.connected } }

    // MARK: Room

    /// Joins the call's room and connects the peer: `JoinedRoom`, `SignalingConnected`,
    /// `SignalingRegistered`, `RtcPeerConnectionCreated`, `GotLocalStream`, `ConnectionTimeoutStart`,
    /// the offer/answer events, then `WebRtcConnected` and `ConnectionTimeoutEnd`. Any failure ends
    /// the call after an `Error`.
    public func startRoom() async {
        let alreadyStarted = setup.withLock { state in defer { state.started = true }; return state.started }
        guard !alreadyStarted else { return }
        guard !call.isEnded else { call.fail(.CALL_ENDED, "startRoom() on an ended call", endingCall: false); return }
        let config = call.sdk.config
        let room: RoomSignaling
        do {
            room = try RoomSignaling(room: call.rtcId, options: .init(
            webrtcUrl: config.webrtcUrl, signalingUrl: config.signalingUrlIsExplicit ? config.signalingUrl : nil,
            headers: parameters.additionalHeaders, joinConnectTimeout: .milliseconds(max(1, parameters.joinHttpConnectTimeout)),
            joinReadTimeout: .milliseconds(max(1, parameters.joinHttpReadTimeout)),
            pinnedCertificates: config.signalingPinnedCertificates.isEmpty ? config.pinnedCertificates : config.signalingPinnedCertificates,
            credential: call.callerToken, trustedCAFile: config.trustedCAFile))
        } catch {
            call.fail(.INVALID_PARAMETERS, error.description, endingCall: true)
            return
        }
        live.withLock { $0.room = room }

        let joined: JoinParameters
        do { joined = try await room.join() } catch {
            call.fail(.JOIN_ROOM_FAILED, error.description, endingCall: true)
            return
        }
        call.emit(.JoinedRoom, detail: joined.isInitiator ? "initiator" : "answerer", objData: joined)
        let iceServers = (joined.pcConfig.iceServers + config.iceServers.map {
            ECVProtocol.ICEServer(urls: $0.urls, username: $0.username, credential: $0.credential)
        }).map { WebRTC.ICEServer(urls: $0.urls, username: $0.username, credential: $0.credential) }
        guard !iceServers.isEmpty else {
            call.fail(.NO_ICE_SERVERS_FOUND, "the join answer has no ICE servers and none are configured", endingCall: true)
            return
        }
        do {
            try await room.openSocket()
            call.emit(.SignalingConnected, objData: self)
            try room.register()
            call.emit(.SignalingRegistered, detail: joined.clientId)
        } catch {
            call.fail(.SIGNALING_FAILED, error.description, endingCall: true)
            return
        }
        await connectPeer(room: room, joined: joined, iceServers: iceServers)
    }

    private func connectPeer(room: RoomSignaling, joined: JoinParameters, iceServers: [WebRTC.ICEServer]) async {
        let media = setup.withLock { state in
            MediaConfiguration(parameters: parameters, video: state.video, audio: state.audio,
                               receiveVideo: .renderer(name: "remote_video"), receiveAudio: state.remoteAudio,
                               localPreview: state.localPreview && parameters.videoCallEnabled ? "local_preview" : nil)
        }
        let configuration = PeerConfiguration(iceServers: iceServers, media: media)
        let peer = PeerConnection(configuration: configuration, role: joined.isInitiator ? .offerer : .answerer) { message in
            room.send(ECVProtocol.SignalingMessage(message))
        }
        live.withLock { $0.peer = peer }
        call.emit(.RtcPeerConnectionCreated, detail: joined.isInitiator ? "offerer" : "answerer", objData: peer)
        observe(peer: peer, room: room)

        let textConfig = parameters.textChannelConfig.flatMap { $0.enabled ? $0 : nil }
        do {
            try await peer.start(dataChannels: textConfig.map { [$0] } ?? [])
        } catch {
            let name: ErrorName = if case .media = error { .INVALID_PARAMETERS } else { .WEBRTC_FAILED }
            call.fail(name, error.description, endingCall: true)
            return
        }
        if let textConfig { attachTextChannel(await peer.openDataChannel(textConfig)) }
        if let preview = await peer.media?.appSink(named: "local_preview") { localFeed.attach(preview) }
        call.emit(.GotLocalStream, detail: parameters.videoCallEnabled ? "audio+video" : "audio", objData: localStream)
        applyMediaState()
        if !controls.withLock({ $0.remoteAudioEnabled }) { await applyRemoteAudioPlayback() }
        startConnectionTimeout()
        for message in joined.messages {
            await handleSignaling(.message(message), peer: peer)
        }
    }

    private func observe(peer: PeerConnection, room: RoomSignaling) {
        let peerEvents = peer.events(), roomEvents = room.events()
        let tasks = [
            Task { [weak self] in
                for await event in peerEvents { await self?.handle(event, from: peer) }
            },
            Task { [weak self] in
                for await event in roomEvents { await self?.handleSignaling(event, peer: peer) }
            },
        ]
        live.withLock { $0.tasks += tasks }
    }

    private func handleSignaling(_ event: RoomSignalingEvent, peer: PeerConnection) async {
        switch event {
        case .message(.bye):
            call.remoteLeftRoom()
        case .message(let message):
            switch message {
            case .offer: call.emit(.GotOffer, objData: message)
            case .answer: call.emit(.GotAnswer, objData: message)
            default: break
            }
            await peer.receive(message.peerMessage)
        case .failure(let reason):
            Logger.warn("[\(call.rtcId)] signaling: \(reason)")
        case .closed(let code, let reason):
            guard !live.withLock({ $0.closed }) else { return }
            Logger.warn("[\(call.rtcId)] the signaling socket closed (\(code) \(reason))")
        }
    }

    private func handle(_ event: PeerEvent, from peer: PeerConnection) async {
        switch event {
        case .sentOffer(let sdp):
            call.emit(.SentOffer, objData: ECVProtocol.SignalingMessage.offer(sdp: sdp))
        case .sentAnswer(let sdp):
            call.emit(.SentAnswer, objData: ECVProtocol.SignalingMessage.answer(sdp: sdp))
        case .stateChanged(let state):
            await peerStateChanged(state, peer: peer)
        case .remoteStream(let stream):
            if stream.kind == .video, let sink = stream.appSink { remoteFeed.attach(sink) }
            live.withLock { _ = $0.remoteKinds.insert(stream.kind) }
            call.emit(.GotRemoteStream, detail: stream.kind.rawValue, objData: remoteStream, data: ["codec": stream.encodingName])
        case .remoteDataChannel(let handle):
            call.emit(.WebRtcOnDataChannel, detail: handle.boundLabel ?? handle.label, objData: handle)
        case .negotiated(let codecs):
            live.withLock { $0.negotiatedCodecs = Dictionary(uniqueKeysWithValues: codecs.map { ($0.key.rawValue, $0.value.description) }) }
        case .unmatchedMedia(_, let reason):
            Logger.warn("[\(call.rtcId)] \(reason)")
        case .adoptedDataChannel(let remoteLabel, let configuredLabel):
            Logger.warn("[\(call.rtcId)] the remote opened its text channel as '\(remoteLabel)', not '\(configuredLabel)'; using it as the text channel")
        case .negotiationNeeded:
            if live.withLock({ $0.connectedOnce }) { call.emit(.WebRtcRenegotiationNeeded) }
        case .error(let message):
            Logger.warn("[\(call.rtcId)] webrtc: \(message)")
        case .rebuilt(let count):
            Logger.info("[\(call.rtcId)] peer connection rebuilt (\(count))")
        default:
            break
        }
    }

    // MARK: Connection lifetime

    private func startConnectionTimeout() {
        let milliseconds = max(1, parameters.connectionTimeout)
        call.emit(.ConnectionTimeoutStart, detail: String(milliseconds))
        let task = Task { [weak self] in
            try? await Task.sleep(for: .milliseconds(milliseconds))
            guard !Task.isCancelled, let self, !self.live.withLock({ $0.connectedOnce }) else { return }
            Logger.warn("[\(self.call.rtcId)] no media connection within \(milliseconds) ms")
            self.call.end(CallEndReason.connectionTimeout)
        }
        live.withLock { $0.tasks.append(task) }
    }

    private func peerStateChanged(_ state: PeerState, peer: PeerConnection) async {
        switch state {
        case .connected:
            let first = live.withLock { live in
                defer { live.connectedOnce = true; live.connected = true }
                live.recoveryDeadline?.cancel()
                live.recoveryDeadline = nil
                return !live.connectedOnce
            }
            let codecs = live.withLock { $0.negotiatedCodecs }
            call.emit(.WebRtcConnected, data: Dictionary(uniqueKeysWithValues: codecs.map { ($0.key + "Codec", $0.value) }))
            if first { call.emit(.ConnectionTimeoutEnd) }
        case .disconnected:
            live.withLock { $0.connected = false }
            call.emit(.WebRtcDisconnected)
            armRecoveryDeadline()
        case .failed:
            live.withLock { $0.connected = false }
            call.emit(.WebRtcFailed)
            armRecoveryDeadline()
            // webrtcbin cannot restart ICE: the offerer rebuilds the peer; the answerer rebuilds
            // itself when the new offer arrives.
            if await peer.role == .offerer {
                do { try await peer.rebuild() } catch { Logger.warn("[\(call.rtcId)] rebuild failed: \(error)") }
            }
        default:
            break
        }
    }

    /// A lost connection that does not come back within `connectionTimeout` ends the call.
    private func armRecoveryDeadline() {
        guard live.withLock({ $0.connectedOnce && $0.recoveryDeadline == nil }) else { return }
        let milliseconds = max(1, parameters.connectionTimeout)
        let task = Task { [weak self] in
            try? await Task.sleep(for: .milliseconds(milliseconds))
            guard !Task.isCancelled, let self, !self.live.withLock({ $0.connected }) else { return }
            self.call.end(CallEndReason.peerDisconnected)
        }
        live.withLock { $0.recoveryDeadline = task }
    }

    /// Closes media and signaling; with `sendBye`, tells the other side first. Idempotent.
    func close(sendBye: Bool) async {
        let (room, peer, tasks, channel) = live.withLock { live -> (RoomSignaling?, PeerConnection?, [Task<Void, Never>], DataChannelHandle?) in
            guard !live.closed else { return (nil, nil, [], nil) }
            live.closed = true
            live.connected = false
            live.recoveryDeadline?.cancel()
            return (live.room, live.peer, live.tasks, live.textChannel)
        }
        for task in tasks { task.cancel() }
        // The file is finalised (EOS through the muxer) while the pipeline still runs.
        if let summary = try? await stopRecording() {
            Logger.info("[\(call.rtcId)] recording \(summary.url.path): \(summary.tracks.count) tracks, \(summary.duration)")
        }
        channel?.close()
        if let room { await room.hangUp(peer: peer, sendBye: sendBye) } else { await peer?.close() }
    }

    /// A stats sample of the peer connection.
    public func stats() async -> PeerStats? {
        guard let peer = peerConnection else { return nil }
        return try? await peer.stats()
    }
}
