import CallEngine
import ECVProtocol
import Foundation
import GLibCore
import GStreamer
import MediaPipeline
import Synchronization
import WebRTC

/// The media side of a call (the seed's `WebRtcConnection`): joins the call's room, connects a
/// real WebRTC peer, renders frames, carries the text channel, and offers the call controls.
///
/// The room, the signaling and the peer are a `CallLeg` over the room's signaling, as on the
/// agent's side; this class turns the leg's steps and events into the seed's events and keeps
/// the seed's controls.
public final class WebRtcConnection: Sendable {
    public let parameters: ConnectParameters
    let call: VideoCall
    let localFeed = RendererFeed()
    let remoteFeed = RendererFeed()

    /// What the app configured before `startRoom()`.
    struct Setup {
        var video: VideoInputs = .cameras(front: .testPattern(pattern: "smpte"), back: .testPattern(pattern: "ball"))
        var audio: AudioSourceSpec = .testTone()
        var remoteAudio: ReceiveSinkSpec = .playback
        var localPreview = true
        var preEncoded = false
        var flashlight: (any FlashlightHandler)?
        var started = false
    }

    /// What the running connection knows.
    struct Live {
        var leg: CallLeg?
        var connectedOnce = false
        var connected = false
        var closed = false
        var recoveryDeadline: Task<Void, Never>?
        /// Checks that a `connected` after a loss carries media again (`confirmRecovery`).
        var recoveryCheck: Task<Void, Never>?
        /// `WebRtcDisconnected` / `WebRtcFailed` were reported for the current loss.
        var lossReported: Set<PeerState> = []
    }

    /// Media controls' state: what the app asked for, and what hold and photo mode impose.
    struct Controls {
        var audioEnabled = true
        var videoEnabled = true
        var onHold = false
        var cameraBeforePhoto: String?
        /// Whether the agent's sound is played here (`remoteStream.setAudioEnabled(_:)`).
        var remoteAudioEnabled = true
    }

    struct State {
        var setup = Setup()
        var live = Live()
        var controls = Controls()
    }
    /// The connection's one state, behind one lock.
    let state = Mutex(State())
    /// The connection's own tasks (timeouts, recovery checks), cancelled when it closes.
    let tasks = TaskSet()

    /// The codec and payload type each kind of media was negotiated with ("audio"/"video" →
    /// "OPUS/111", "H264/102"), from the last completed offer/answer; also in the
    /// `WebRtcConnected` event's data as `audioCodec`/`videoCodec`; the data also names each
    /// direction the answer makes travel (`videoCodecSent`, `videoCodecReceived`, …), so a
    /// direction that is not negotiated (a receive-only far end) has no key.
    public var negotiatedCodecs: [String: String] { leg?.negotiatedCodecNames ?? [:] }

    /// `WebRtcConnected`'s codec keys: `audioCodec`/`videoCodec`, and `videoCodecSent`,
    /// `audioCodecReceived`… for each direction the answer makes travel.
    var connectedCodecData: [String: String] {
        guard let leg else { return [:] }
        var data = Dictionary(uniqueKeysWithValues: leg.negotiatedCodecNames.map { ($0.key + "Codec", $0.value) })
        for (direction, codec) in leg.codecsByDirection {
            data[direction.kind.rawValue + "Codec" + (direction.sending ? "Sent" : "Received")] = codec.description
        }
        return data
    }

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
        get { state.withLock { $0.setup.video } }
        set { state.withLock { $0.setup.video = newValue } }
    }

    /// The microphone: any audio source. Default: a 440 Hz test tone.
    public var audioSource: AudioSourceSpec {
        get { state.withLock { $0.setup.audio } }
        set { state.withLock { $0.setup.audio = newValue } }
    }

    /// Where the agent's audio goes. Default: the speaker (`useSpeakerPhone`), or a clock-synced
    /// sink on machines without an audio device.
    public var remoteAudioSink: ReceiveSinkSpec {
        get { state.withLock { $0.setup.remoteAudio } }
        set { state.withLock { $0.setup.remoteAudio = newValue } }
    }

    /// Whether the local preview branch exists (needed for `localVideoRenderer`). Default true.
    public var localPreviewEnabled: Bool {
        get { state.withLock { $0.setup.localPreview } }
        set { state.withLock { $0.setup.localPreview = newValue } }
    }

    /// Send media the application pushes already encoded into the send graph's appsrcs
    /// (`PreEncodedSend`, found through `peerConnection`) instead of `videoSource`/`audioSource`.
    /// Package-only: the benchmarks' load generator plays one encoded clip into many calls.
    package var sendsPreEncodedMedia: Bool {
        get { state.withLock { $0.setup.preEncoded } }
        set { state.withLock { $0.setup.preEncoded = newValue } }
    }

    /// The torch. Without one, agents' flash requests are answered `UNAVAILABLE`.
    public var flashlightHandler: (any FlashlightHandler)? {
        get { state.withLock { $0.setup.flashlight } }
        set { state.withLock { $0.setup.flashlight = newValue } }
    }

    /// What this caller sends: renderer, mute, track info (the seed's `localStream`). A view onto
    /// the connection: every read gives the current state.
    public var localStream: MediaStream { MediaStream(party: .local, connection: self, feed: localFeed) }
    /// What the agent sends (the seed's `remoteStream`); its tracks appear as the media arrives.
    public var remoteStream: MediaStream { MediaStream(party: .remote, connection: self, feed: remoteFeed) }

    var leg: CallLeg? { state.withLock { $0.live.leg } }
    /// The peer connection, once `startRoom()` created it (the SDK's own tests and diagnostics).
    package var peerConnection: PeerConnection? { leg?.peer }
    /// The text channel, once created.
    var textChannel: DataChannelHandle? { leg?.channels.first }
    public var isConnected: Bool { state.withLock { $0.live.connected } }

    // MARK: Room

    /// Joins the call's room and connects the peer: `JoinedRoom`, `SignalingConnected`,
    /// `SignalingRegistered`, `RtcPeerConnectionCreated`, `GotLocalStream`, `ConnectionTimeoutStart`,
    /// the offer/answer events, then `WebRtcConnected` and `ConnectionTimeoutEnd`. Any failure ends
    /// the call after an `Error`.
    public func startRoom() async {
        let (alreadyStarted, setup) = state.withLock { state in
            defer { state.setup.started = true }
            return (state.setup.started, state.setup)
        }
        guard !alreadyStarted else { return }
        guard !call.isEnded else { call.fail(.CALL_ENDED, "startRoom() on an ended call", endingCall: false); return }
        let config = call.sdk.config
        var media = MediaConfiguration(parameters: parameters.media, video: setup.video, audio: setup.audio,
                                       receiveVideo: .renderer(name: MediaConfiguration.remoteVideoSink), receiveAudio: setup.remoteAudio,
                                       localPreview: setup.localPreview && parameters.videoCallEnabled ? MediaConfiguration.localPreviewSink : nil)
        media.sendsPreEncodedMedia = setup.preEncoded
        var options = RoomSignaling.Options(
            parameters: parameters, webrtcUrl: config.webrtcUrl, signalingUrl: config.signalingUrlIsExplicit ? config.signalingUrl : nil,
            pins: config.pinnedCertificates, signalingPins: config.signalingPinnedCertificates, credential: call.callerToken,
            trustedCAFile: config.trustedCAFile)
        options.reconnectWindow = .milliseconds(max(0, config.reconnectWindowMs))
        let signaling: RoomLegSignaling
        do {
            signaling = try RoomLegSignaling(room: call.rtcId, options: options) { [weak self] step in await self?.room(completed: step) }
        } catch {
            call.fail(.INVALID_PARAMETERS, error.description, endingCall: true)
            return
        }
        let policy = parameters.iceTransportPolicy ?? config.iceTransportPolicy
        var plan = CallLegPlan(peer: PeerConfiguration(iceServers: (config.iceServers + parameters.iceServers).map(WebRTC.ICEServer.init),
                                                       iceTransportPolicy: policy == .relay ? .relay : .all, media: media))
        plan.requiresICEServers = true
        plan.createdChannels = parameters.textChannelConfig.flatMap { $0.enabled ? [$0] : nil } ?? []
        plan.boundChannels = plan.createdChannels
        plan.remoteVideo = remoteFeed
        plan.localPreview = localFeed
        let leg = CallLeg(plan: plan, signaling: signaling, observer: self)
        let closed = state.withLock { state in
            if !state.live.closed { state.live.leg = leg }
            return state.live.closed
        }
        guard !closed else { await signaling.close(peer: nil, sendBye: false); return }
        do { try await leg.start() } catch {
            guard !leg.isClosed else { return }
            call.fail(Self.errorName(error), error.description, cause: error.failure, endingCall: true)
        }
    }

    /// The seed's error name for a failed step of the leg.
    static func errorName(_ error: CallLegError) -> ErrorName {
        switch error {
        case .relayWithoutTURN: .INVALID_PARAMETERS
        case .signaling(.join, _): .JOIN_ROOM_FAILED
        case .signaling(.connect, _): .SIGNALING_FAILED
        case .noICEServers: .NO_ICE_SERVERS_FOUND
        case .peer(.unsupported): .INVALID_PARAMETERS
        case .peer: .WEBRTC_FAILED
        }
    }

    // MARK: Connection lifetime

    private func startConnectionTimeout() {
        let milliseconds = max(1, parameters.connectionTimeout)
        call.emit(.ConnectionTimeoutStart, detail: String(milliseconds))
        let task = Task { [weak self] in
            do { try await Task.sleep(for: .milliseconds(milliseconds)) } catch { return } // cancelled: the connection closed
            guard let self, !self.state.withLock({ $0.live.connectedOnce }) else { return }
            Logger.warn("[\(self.call.rtcId)] no media connection within \(milliseconds) ms")
            self.call.end(CallEndReason.connectionTimeout)
        }
        keep(task)
    }

    /// Keeps a task of this connection, cancelled when it closes (at once if it already has).
    func keep(_ task: Task<Void, Never>) { tasks.keep(task) }

    /// Closes media and signaling; with `sendBye`, tells the other side first. Idempotent. A
    /// recording that cannot be finalised is reported (`RECORDING_FAILED`).
    func close(sendBye: Bool) async {
        let (leg, first) = state.withLock { state -> (CallLeg?, Bool) in
            guard !state.live.closed else { return (nil, false) }
            state.live.closed = true
            state.live.connected = false
            state.live.recoveryDeadline?.cancel()
            return (state.live.leg, true)
        }
        guard first else { return }
        tasks.cancelAll()
        switch await leg?.close(sendBye: sendBye) {
        case .success(let summary)?:
            Logger.info("[\(call.rtcId)] recording \(summary.url.path): \(summary.tracks.count) tracks, \(summary.duration)")
        case .failure(let error)?:
            call.fail(.RECORDING_FAILED, "the recording was not finalised: \(error)", cause: .recording(error.description), endingCall: false)
        case nil:
            break
        }
    }

    /// The call's media pipeline as Graphviz text (every element, pad and negotiated caps), for
    /// diagnostics; nil before the peer runs.
    public func pipelineDOT() async -> String? { await leg?.pipelineDOT() }

    /// A stats sample of the peer connection; nil before the peer runs or after it closed.
    public func stats() async -> PeerStats? { await leg?.stats() }
}

extension WebRtcConnection: CallLegObserver {
    /// The room's steps, before the leg's own.
    func room(completed step: RoomStep) async {
        switch step {
        case .joined(let joined):
            call.emit(.JoinedRoom, detail: joined.isInitiator ? "initiator" : "answerer", objData: joined)
        case .signalingConnected:
            call.emit(.SignalingConnected, objData: self)
        case .signalingRegistered(let clientId):
            call.emit(.SignalingRegistered, detail: clientId)
        }
    }

    package func leg(_ leg: CallLeg, completed step: CallLegStep) async {
        switch step {
        case .peerCreated(let role):
            call.emit(.RtcPeerConnectionCreated, detail: role.rawValue, objData: self)
        case .mediaStarted(let channels):
            if let channel = channels.first { attachTextChannel(channel) }
            call.emit(.GotLocalStream, detail: parameters.videoCallEnabled ? "audio+video" : "audio", objData: localStream)
            applyMediaState()
            if !state.withLock({ $0.controls.remoteAudioEnabled }) { await applyRemoteAudioPlayback() }
            startConnectionTimeout()
        }
    }

    package func leg(_ leg: CallLeg, observed event: CallLegEvent) async {
        switch event {
        case .received(let message):
            switch message {
            case .offer: call.emit(.GotOffer, objData: ECVProtocol.SignalingMessage(message))
            case .answer: call.emit(.GotAnswer, objData: ECVProtocol.SignalingMessage(message))
            default: break
            }
        case .remoteLeft:
            call.remoteLeftRoom()
        case .signalingFailure(let reason):
            Logger.warn("[\(call.rtcId)] signaling: \(reason)")
        case .signalingReconnecting(let reason):
            call.emit(.Reconnecting, detail: ReconnectingLink.signaling, data: ["reason": reason])
        case .signalingReconnected:
            call.emit(.Reconnected, detail: ReconnectingLink.signaling)
        case .signalingClosed(let code, let reason):
            Logger.warn("[\(call.rtcId)] the signaling socket closed (\(code) \(reason))")
            // 1000 is the service closing the room after its `bye` (the end or a transfer, which
            // the queue wait reports); anything else leaves the call without signaling for good.
            if code != ECVCloseCode.normal {
                call.fail(.SIGNALING_FAILED, "the signaling socket closed (\(code) \(reason))", endingCall: true)
            }
        case .rebuildFailed(let error):
            call.fail(.WEBRTC_FAILED, "the peer failed and could not be rebuilt: \(error)", cause: .webrtc(error.description), endingCall: false)
        case .peer(let event):
            handle(event)
        }
    }

    private func handle(_ event: PeerEvent) {
        switch event {
        case .sentOffer(let sdp):
            call.emit(.SentOffer, objData: ECVProtocol.SignalingMessage.offer(sdp: sdp))
        case .sentAnswer(let sdp):
            call.emit(.SentAnswer, objData: ECVProtocol.SignalingMessage.answer(sdp: sdp))
        case .stateChanged(let peerState):
            peerStateChanged(peerState)
        case .remoteStream(let stream):
            call.emit(.GotRemoteStream, detail: stream.kind.rawValue, objData: remoteStream, data: ["codec": stream.encodingName])
        case .remoteDataChannel(let handle):
            call.emit(.WebRtcOnDataChannel, detail: handle.boundLabel ?? handle.label)
        case .unmatchedMedia(_, let reason):
            Logger.warn("[\(call.rtcId)] \(reason)")
        case .mediaSilent(let direction, let everCarried):
            Logger.warn("[\(call.rtcId)] no \(direction) for 5 s" + (everCarried ? "" : ", none at all so far"))
            call.emit(.MediaSilent, detail: direction.description,
                      data: ["kind": direction.kind.rawValue, "direction": direction.sending ? "sent" : "received", "everCarried": String(everCarried)])
        case .noCommonCodec(let kind, let ours, let theirs):
            call.fail(.NO_COMMON_CODEC, NoCommonCodec.message(kind: kind.rawValue, ours: ours, theirs: theirs), endingCall: true)
        case .adoptedDataChannel(let remoteLabel, let configuredLabel):
            Logger.warn("[\(call.rtcId)] the remote opened its text channel as '\(remoteLabel)', not '\(configuredLabel)'; using it as the text channel")
        case .negotiationNeeded:
            if state.withLock({ $0.live.connectedOnce }) { call.emit(.WebRtcRenegotiationNeeded) }
        case .error(let message):
            Logger.warn("[\(call.rtcId)] webrtc: \(message)")
        case .rebuilt(let count):
            Logger.info("[\(call.rtcId)] peer connection rebuilt (\(count))")
        case .bandwidthChanged(let decision):
            call.emit(.BandwidthChanged, detail: decision.reason, objData: decision,
                      data: ["targetKbps": String(decision.targetKbps), "estimateKbps": String(decision.estimateKbps),
                             "reason": decision.reason])
        default:
            break
        }
    }
}
