import ECVProtocol
import Foundation
import GLibCore
import MediaPipeline
import MediaRuntime
import Synchronization
import WebRTC

/// What a call session is built from: the room, how to reach it, the media. The caller's
/// `WebRtcConnection` and the agent's `AgentCall` fill it from their own configuration.
package struct CallSessionPlan: Sendable {
    package var room: String
    package var signaling: RoomSignaling.Options
    /// ICE servers used after the join answer's.
    package var iceServers: [WebRTC.ICEServer]
    package var media: MediaConfiguration
    /// The text channel this side opens (nil: none).
    package var textChannel: DataChannelConfig?
    /// Whether a join answer without ICE servers, with none configured, fails the start: the
    /// seed's rule for callers (`NO_ICE_SERVERS_FOUND`); an agent bot goes on with host candidates.
    package var requiresICEServers: Bool
    /// How long the peer's jitter buffers wait for late and resent packets (`PeerConfiguration`'s).
    package var jitterBufferLatencyMs: Int
    /// `.relay`: TURN-relayed candidates only, and a TURN server is required.
    package var iceTransportPolicy: ECVProtocol.ICETransportPolicy = .all

    package init(room: String, signaling: RoomSignaling.Options, iceServers: [WebRTC.ICEServer], media: MediaConfiguration,
                 textChannel: DataChannelConfig?, requiresICEServers: Bool,
                 jitterBufferLatencyMs: Int = PeerConfiguration.defaultJitterBufferLatencyMs) {
        self.jitterBufferLatencyMs = jitterBufferLatencyMs
        self.room = room
        self.signaling = signaling
        self.iceServers = iceServers
        self.media = media
        self.textChannel = textChannel.flatMap { $0.enabled ? $0 : nil }
        self.requiresICEServers = requiresICEServers
    }
}

extension WebRTC.ICEServer {
    /// The peer's form of an ICE server from the configuration or a join answer.
    package init(_ server: ECVProtocol.ICEServer) {
        self.init(urls: server.urls, username: server.username, credential: server.credential)
    }
}

extension ECVProtocol.ICEServer {
    init(_ server: WebRTC.ICEServer) {
        self.init(urls: server.urls, username: server.username, credential: server.credential)
    }
}

extension RoomSignaling.Options {
    /// The room options both sides use: join timeouts and headers from the call's parameters,
    /// the signaling pins (the API's when none are given) and the participant's credential.
    package init(parameters: ConnectParameters, webrtcUrl: String, signalingUrl: String?, pins: [String], signalingPins: [String],
                 credential: String?, trustedCAFile: String?) {
        self.init(webrtcUrl: webrtcUrl, signalingUrl: signalingUrl, headers: parameters.additionalHeaders,
                  joinConnectTimeout: .milliseconds(max(1, parameters.joinHttpConnectTimeout)),
                  joinReadTimeout: .milliseconds(max(1, parameters.joinHttpReadTimeout)),
                  pinnedCertificates: signalingPins.isEmpty ? pins : signalingPins, credential: credential, trustedCAFile: trustedCAFile)
    }
}

/// Why a call session could not be set up, by the step that failed.
package enum CallSessionError: Error, Sendable, CustomStringConvertible {
    /// The room options cannot be honoured (a malformed pin, a missing CA file).
    case invalidOptions(ECVConfigurationError)
    case join(RoomSignalingError)
    case noICEServers
    /// Relay-only without a TURN server among the ICE servers: no candidate could ever connect.
    case relayWithoutTURN
    case signaling(RoomSignalingError)
    case peer(PeerError)

    package var description: String {
        switch self {
        case .invalidOptions(let error): error.description
        case .join(let error), .signaling(let error): error.description
        case .noICEServers: "the join answer has no ICE servers and none are configured"
        case .relayWithoutTURN: "the ICE transport policy is relay, but no TURN server is configured or in the join answer"
        case .peer(let error): error.description
        }
    }
}

/// The steps of `CallSession.start()`, reported as they complete (awaited, on the starting task).
package enum CallSessionStep: Sendable {
    case joined(JoinParameters)
    case signalingConnected
    case signalingRegistered(clientId: String)
    case peerCreated(role: PeerConnection.Role)
    /// The peer runs; its text channel (when planned) is open or opening.
    case mediaStarted(textChannel: DataChannelHandle?)
}

/// What happens in a running session, in order (one task delivers them).
package enum CallSessionEvent: Sendable {
    case peer(PeerEvent)
    /// The other side's offer or answer, before the peer applies it.
    case received(ECVProtocol.SignalingMessage)
    /// The other side left the room (`bye`).
    case remoteLeft
    case signalingFailure(String)
    /// The signaling socket dropped and is being reopened (why it dropped); media keeps flowing.
    case signalingReconnecting(String)
    /// The signaling socket is registered again in the same slot.
    case signalingReconnected
    /// The signaling socket closed for good (an answer, or not reopened within the window).
    case signalingClosed(code: UInt16, reason: String)
    /// The peer failed and rebuilding it failed too.
    case rebuildFailed(PeerError)
}

/// Whoever owns a session: told of its steps and events.
package protocol CallSessionObserver: AnyObject, Sendable {
    func session(_ session: CallSession, completed step: CallSessionStep) async
    func session(_ session: CallSession, observed event: CallSessionEvent) async
}

/// One side of a call's media, for the caller and the agent alike: joins the room, opens and
/// registers the signaling socket, builds the peer, relays signaling to it in arrival order,
/// rebuilds it when it fails (the offerer; the answerer is rebuilt by the next offer), and owns
/// the recording until the session closes.
package final class CallSession: Sendable {
    package let plan: CallSessionPlan
    private weak let observer: (any CallSessionObserver)?

    private struct State {
        var room: RoomSignaling?
        var peer: PeerConnection?
        var textChannel: DataChannelHandle?
        var tasks: [Task<Void, Never>] = []
        var recording: ActiveRecording?
        var closed = false
    }
    private let state = Mutex(State())

    package init(plan: CallSessionPlan, observer: any CallSessionObserver) {
        self.plan = plan
        self.observer = observer
    }

    package var peer: PeerConnection? { state.withLock { $0.peer } }
    package var textChannel: DataChannelHandle? { state.withLock { $0.textChannel } }
    package var isClosed: Bool { state.withLock { $0.closed } }

    // MARK: Start

    /// Joins, connects signaling, starts the peer and opens the text channel, reporting each step;
    /// then hands the join answer's queued messages to the peer.
    package func start() async throws(CallSessionError) {
        let room: RoomSignaling
        do { room = try RoomSignaling(room: plan.room, options: plan.signaling) } catch { throw .invalidOptions(error) }
        guard adopt(room) else { return }
        // Subscribed before registering: the collider delivers what waited for this client as
        // soon as the socket registers, long before the peer exists to take it.
        let roomEvents = room.events()
        let joined: JoinParameters
        do { joined = try await room.join() } catch { throw .join(error) }
        await report(.joined(joined))
        let iceServers = joined.pcConfig.iceServers.map(WebRTC.ICEServer.init) + plan.iceServers
        guard !iceServers.isEmpty || !plan.requiresICEServers else { throw .noICEServers }
        let relayOnly = plan.iceTransportPolicy == .relay
        guard !relayOnly || iceServers.contains(where: { ECVProtocol.ICEServer($0).isTURN }) else { throw .relayWithoutTURN }
        do {
            try await room.openSocket()
            await report(.signalingConnected)
            try room.register()
            await report(.signalingRegistered(clientId: joined.clientId))
        } catch {
            throw .signaling(error)
        }
        let role: PeerConnection.Role = joined.isInitiator ? .offerer : .answerer
        let peer = PeerConnection(configuration: PeerConfiguration(iceServers: iceServers, iceTransportPolicy: relayOnly ? .relay : .all,
                                                                     jitterBufferLatencyMs: plan.jitterBufferLatencyMs, media: plan.media),
                                  role: role) { message in
            room.send(ECVProtocol.SignalingMessage(message))
        }
        guard adopt(peer) else { await peer.close(); return }
        await report(.peerCreated(role: role))
        observe(peer)
        do { try await peer.start(dataChannels: plan.textChannel.map { [$0] } ?? []) } catch { throw .peer(error) }
        var channel: DataChannelHandle?
        if let textChannel = plan.textChannel {
            let opened = await peer.openDataChannel(textChannel)
            state.withLock { $0.textChannel = opened }
            channel = opened
        }
        await report(.mediaStarted(textChannel: channel))
        // The join answer's messages were sent before anything the socket brings: they go first.
        for message in joined.messages { await relay(message, to: peer) }
        relay(roomEvents, to: peer)
    }

    /// Keeps `room` unless the session closed meanwhile (then it is closed too).
    private func adopt(_ room: RoomSignaling) -> Bool {
        let kept = state.withLock { state -> Bool in
            guard !state.closed else { return false }
            state.room = room
            return true
        }
        if !kept { room.close() }
        return kept
    }

    private func adopt(_ peer: PeerConnection) -> Bool {
        state.withLock { state in
            guard !state.closed else { return false }
            state.peer = peer
            return true
        }
    }

    private func report(_ step: CallSessionStep) async { await observer?.session(self, completed: step) }

    // MARK: Running

    private func observe(_ peer: PeerConnection) {
        let peerEvents = peer.events()
        keep(Task { [weak self] in
            for await event in peerEvents {
                guard let self else { return }
                await self.observer?.session(self, observed: .peer(event))
                if case .stateChanged(.failed) = event { await self.rebuildIfOfferer(peer) }
            }
        })
    }

    /// The room's events from now on, in arrival order (what came before waited in `events`).
    private func relay(_ events: AsyncStream<RoomSignalingEvent>, to peer: PeerConnection) {
        keep(Task { [weak self] in
            for await event in events {
                guard let self else { return }
                switch event {
                case .message(let message): await self.relay(message, to: peer)
                case .failure(let reason): await self.observer?.session(self, observed: .signalingFailure(reason))
                case .reconnecting(let reason): await self.observer?.session(self, observed: .signalingReconnecting(reason))
                case .reconnected: await self.observer?.session(self, observed: .signalingReconnected)
                case .closed(let code, let reason):
                    guard !self.isClosed else { return }
                    await self.observer?.session(self, observed: .signalingClosed(code: code, reason: reason))
                }
            }
        })
    }

    /// Keeps a task of the session, cancelled when it closes (at once if it has).
    private func keep(_ task: Task<Void, Never>) {
        let closed = state.withLock { state -> Bool in
            if !state.closed { state.tasks.append(task) }
            return state.closed
        }
        if closed { task.cancel() }
    }

    /// The other side's message, to the peer in arrival order; `bye` ends the session's part.
    private func relay(_ message: ECVProtocol.SignalingMessage, to peer: PeerConnection) async {
        switch message {
        case .bye:
            await observer?.session(self, observed: .remoteLeft)
        case .offer, .answer:
            await observer?.session(self, observed: .received(message))
            await peer.receive(message.peerMessage)
        case .candidate:
            await peer.receive(message.peerMessage)
        }
    }

    /// webrtcbin cannot restart ICE: the offerer rebuilds its peer and offers again; the
    /// answerer is rebuilt when that new offer arrives.
    private func rebuildIfOfferer(_ peer: PeerConnection) async {
        guard await peer.role == .offerer, !isClosed else { return }
        do { try await peer.rebuild() } catch {
            await observer?.session(self, observed: .rebuildFailed(error))
        }
    }

    // MARK: Recording

    /// Records the call as `layout` says; the session finalises it when it closes.
    package func startRecording(to url: URL, format: RecordingFormat, layout: RecordingLayout, labels: RecordingLabels,
                                markers: (@Sendable (CallRecording) -> CallMarkers)? = nil) async throws(RecordingError) {
        guard let peer else { throw .pipeline("the call's media has not started") }
        guard state.withLock({ $0.recording == nil }) else { throw .alreadyStarted }
        let started: ActiveRecording
        switch layout {
        case .separateTracks:
            let recording = try await peer.startRecording(to: url, format: format, labels: labels)
            started = .tracks(recording, markers?(recording))
        case .pictureInPicture:
            started = .composite(try await peer.startCompositeRecording(to: url, format: format))
        }
        let (displaced, closed) = state.withLock { state -> (ActiveRecording?, Bool) in
            if state.closed { return (nil, true) }
            defer { state.recording = started }
            return (state.recording, false)
        }
        if closed {
            _ = try await started.stop()
            throw .alreadyStopped
        }
        // Two overlapping starts: the later one is kept, the earlier one finalised.
        if let displaced { _ = try await displaced.stop() }
    }

    package var recording: ActiveRecording? { state.withLock { $0.recording } }

    /// Finalises the recording; nil when none runs.
    package func stopRecording() async throws(RecordingError) -> RecordingSummary? {
        guard let recording = state.withLock({ state in defer { state.recording = nil }; return state.recording }) else { return nil }
        return try await recording.stop()
    }

    // MARK: Close

    /// Ends this side: the recording is finalised while the media still runs, then the text
    /// channel, the peer (after `bye` when asked) and the room close. Idempotent. Returns what
    /// the recording holds, or why it could not be finalised.
    @discardableResult
    package func close(sendBye: Bool) async -> Result<RecordingSummary, RecordingError>? {
        let taken = state.withLock { state -> State? in
            guard !state.closed else { return nil }
            state.closed = true
            defer { state.recording = nil; state.tasks = [] }
            return state
        }
        guard let (room, peer, tasks, channel, recording) = taken.map({ ($0.room, $0.peer, $0.tasks, $0.textChannel, $0.recording) }) else {
            return nil
        }
        for task in tasks { task.cancel() }
        var finalised: Result<RecordingSummary, RecordingError>?
        if let recording {
            do { finalised = .success(try await recording.stop()) } catch { finalised = .failure(error) }
        }
        channel?.close()
        if let room { await room.hangUp(peer: peer, sendBye: sendBye) } else { await peer?.close() }
        return finalised
    }
}
