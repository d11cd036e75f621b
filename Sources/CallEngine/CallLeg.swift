import Foundation
import GLibCore
import MediaPipeline
import MediaRuntime
import Synchronization
import WebRTC

/// What a call leg is built from: the peer's configuration, the channels it opens, where its
/// pictures go, and how it answers a failed connection. Each product fills it from its own
/// configuration (the caller's `WebRtcConnection`, the agent's `AgentCall`, ECVPeer's
/// `MediaConnection` and `DataConnection`).
package struct CallLegPlan: Sendable {
    /// The peer's configuration; its ICE servers are the configured ones, which the leg puts
    /// after those the signaling hands out.
    package var peer: PeerConfiguration
    /// Whether no ICE server at all fails the start (the seed's rule for callers,
    /// `NO_ICE_SERVERS_FOUND`); agents and peers go on with host candidates.
    package var requiresICEServers = false
    /// The channels the peer creates when it starts (its offer carries them).
    package var createdChannels: [DataChannelConfig] = []
    /// The channels whose handles the leg takes once the peer runs: created here, or the far
    /// end's when it opens them (so nothing sent right after the open is missed).
    package var boundChannels: [DataChannelConfig] = []
    /// The offerer rebuilds a failed peer and offers again (webrtcbin cannot restart ICE); the
    /// answerer is rebuilt by that offer. Off: a failed peer is the facade's to end.
    package var rebuildsWhenFailed = true
    /// Where the far end's decoded pictures go (attached when its video arrives).
    package var remoteVideo: RendererFeed?
    /// Where this side's picture as sent goes (attached when the media starts).
    package var localPreview: RendererFeed?

    package init(peer: PeerConfiguration) { self.peer = peer }
}

extension MediaConfiguration {
    /// The send graph's branch that shows this side's picture as sent.
    package static let localPreviewSink = "local_preview"
    /// The receive graph's sink of the far end's decoded picture.
    package static let remoteVideoSink = "remote_video"
}

/// A call leg's steps, each reported once as its phase moves on.
package enum CallLegStep: Sendable {
    case peerCreated(role: PeerConnection.Role)
    /// The peer runs; the planned channels' handles, in the plan's order.
    case mediaStarted(channels: [DataChannelHandle])
}

/// What happens on a running leg, in order (one task delivers the peer's events, another the
/// signaling's).
package enum CallLegEvent: Sendable {
    case peer(PeerEvent)
    /// The other side's offer or answer, before the peer applies it.
    case received(SignalingMessage)
    /// The other side left (`bye`).
    case remoteLeft
    case signalingFailure(String)
    /// The signaling socket dropped and is being reopened (why); media keeps flowing.
    case signalingReconnecting(String)
    case signalingReconnected
    /// The signaling socket closed for good.
    case signalingClosed(code: UInt16, reason: String)
    /// The peer failed and rebuilding it failed too.
    case rebuildFailed(PeerError)
}

/// Whoever owns a leg (a product's facade): told of its steps and events, and translates them.
package protocol CallLegObserver: AnyObject, Sendable {
    func leg(_ leg: CallLeg, completed step: CallLegStep) async
    func leg(_ leg: CallLeg, observed event: CallLegEvent) async
}

/// One side of one call, under every product: it reaches the other side through its signaling,
/// builds the peer connection, relays signaling to it in arrival order, rebuilds it when it fails,
/// feeds the pictures to their renderers, applies the send controls in the peer's order, keeps
/// the negotiated codecs and the recording, and owns its tasks until it closes.
///
/// Its state is one `Phase` plus what the call learned, behind one lock; each step is reported
/// when the phase moves on, so no step can be reported twice or after the close.
package final class CallLeg: Sendable {
    /// Where a leg is in its life. Only forward: idle → connecting → starting → running → closed
    /// (closed from any phase).
    package enum Phase: Sendable, Equatable {
        case idle
        /// The signaling is reaching the other side.
        case connecting
        /// The peer exists and its media is starting.
        case starting(PeerConnection.Role)
        case running(PeerConnection.Role)
        case closed
    }

    package let plan: CallLegPlan
    package let signaling: any CallLegSignaling
    private weak let observer: (any CallLegObserver)?
    private let tasks = TaskSet()

    private struct State {
        var phase = Phase.idle
        var peer: PeerConnection?
        var channels: [DataChannelHandle] = []
        var recording: ActiveRecording?
        /// The codec each kind of media was negotiated with, from the last completed offer/answer.
        var negotiated: [MediaKind: NegotiatedCodec] = [:]
        /// The directions that answer makes travel.
        var directions: Set<MediaDirection> = []
        /// The kinds of media the far end has sent so far.
        var remoteKinds: Set<MediaKind> = []
    }
    private let state = Mutex(State())

    package init(plan: CallLegPlan, signaling: any CallLegSignaling, observer: any CallLegObserver) {
        self.plan = plan
        self.signaling = signaling
        self.observer = observer
        InstanceCounter.increment("CallLeg")
    }

    deinit { InstanceCounter.decrement("CallLeg") }

    package var phase: Phase { state.withLock { $0.phase } }
    package var isClosed: Bool { phase == .closed }
    package var peer: PeerConnection? { state.withLock { $0.peer } }
    /// The planned channels' handles, once the media started.
    package var channels: [DataChannelHandle] { state.withLock { $0.channels } }
    package var remoteKinds: Set<MediaKind> { state.withLock { $0.remoteKinds } }
    package var negotiatedCodecs: [MediaKind: NegotiatedCodec] { state.withLock { $0.negotiated } }
    /// The codec of each direction the last answer makes travel; a direction it does not
    /// negotiate (a receive-only far end's sending) has none.
    package var codecsByDirection: [MediaDirection: NegotiatedCodec] {
        state.withLock { state in
            Dictionary(uniqueKeysWithValues: state.directions.compactMap { direction in state.negotiated[direction.kind].map { (direction, $0) } })
        }
    }

    // MARK: Start

    /// Reaches the other side, starts the peer and takes the planned channels, reporting each
    /// step; then hands the signaling's waiting messages to the peer, and everything after them.
    /// A leg closed meanwhile returns quietly.
    package func start() async throws(CallLegError) {
        guard move(from: .idle, to: .connecting) else { return }
        // Subscribed before connecting: what waited for this side arrives as soon as the
        // signaling registers, long before the peer exists to take it.
        let events = signaling.events()
        let ready = try await signaling.connect()
        var configuration = plan.peer
        configuration.iceServers = ready.iceServers + plan.peer.iceServers
        guard !configuration.iceServers.isEmpty || !plan.requiresICEServers else { throw .noICEServers }
        guard configuration.iceTransportPolicy != .relay || configuration.iceServers.contains(where: \.isTURN) else { throw .relayWithoutTURN }
        let signaling = self.signaling
        let peer = PeerConnection(configuration: configuration, role: ready.role) { message in signaling.send(message) }
        guard adopt(peer, role: ready.role) else { await peer.close(); return }
        await observer?.leg(self, completed: .peerCreated(role: ready.role))
        observe(peer)
        do { try await peer.start(dataChannels: plan.createdChannels) } catch { throw .peer(error) }
        var channels: [DataChannelHandle] = []
        for config in plan.boundChannels { channels.append(await peer.openDataChannel(config)) }
        if let feed = plan.localPreview, let sink = await peer.media?.appSink(named: MediaConfiguration.localPreviewSink) { feed.attach(sink) }
        let running = state.withLock { state -> Bool in
            guard state.phase == .starting(ready.role) else { return false }
            state.phase = .running(ready.role)
            state.channels = channels
            return true
        }
        guard running else { channels.forEach { $0.close() }; return }
        await observer?.leg(self, completed: .mediaStarted(channels: channels))
        // The signaling's waiting messages were sent before anything its events bring: they go first.
        for message in ready.waiting { await relay(.message(message), to: peer) }
        relay(events, to: peer)
    }

    /// Moves the phase on when it is `from`; false when it is not (the leg closed meanwhile).
    private func move(from: Phase, to: Phase) -> Bool {
        state.withLock { state in
            guard state.phase == from else { return false }
            state.phase = to
            return true
        }
    }

    private func adopt(_ peer: PeerConnection, role: PeerConnection.Role) -> Bool {
        state.withLock { state in
            guard state.phase == .connecting else { return false }
            state.phase = .starting(role)
            state.peer = peer
            return true
        }
    }

    // MARK: Running

    private func observe(_ peer: PeerConnection) {
        let peerEvents = peer.events()
        tasks.run { [weak self] in
            for await event in peerEvents {
                guard let self else { return }
                self.learn(from: event)
                await self.observer?.leg(self, observed: .peer(event))
                if case .stateChanged(.failed) = event, self.plan.rebuildsWhenFailed { await self.rebuildIfOfferer(peer) }
            }
        }
    }

    /// What the leg keeps of a peer event before its owner hears of it: the owner's reaction
    /// (an event with the codecs, a renderer's first frame) finds the leg already knowing.
    private func learn(from event: PeerEvent) {
        switch event {
        case .remoteStream(let stream):
            if stream.kind == .video, let sink = stream.appSink { plan.remoteVideo?.attach(sink) }
            state.withLock { _ = $0.remoteKinds.insert(stream.kind) }
        case .negotiated(let codecs):
            state.withLock { $0.negotiated = codecs }
        case .directionsNegotiated(let directions):
            state.withLock { $0.directions = directions }
        default:
            break
        }
    }

    /// The signaling's events from now on, in arrival order.
    private func relay(_ events: AsyncStream<CallSignalingEvent>, to peer: PeerConnection) {
        tasks.run { [weak self] in
            for await event in events {
                guard let self else { return }
                await self.relay(event, to: peer)
            }
        }
    }

    private func relay(_ event: CallSignalingEvent, to peer: PeerConnection) async {
        switch event {
        case .message(.bye), .remoteLeft:
            await observer?.leg(self, observed: .remoteLeft)
        case .message(let message):
            if case .candidate = message {} else { await observer?.leg(self, observed: .received(message)) }
            await peer.receive(message)
        case .failure(let reason): await observer?.leg(self, observed: .signalingFailure(reason))
        case .reconnecting(let reason): await observer?.leg(self, observed: .signalingReconnecting(reason))
        case .reconnected: await observer?.leg(self, observed: .signalingReconnected)
        case .closed(let code, let reason):
            guard !isClosed else { return }
            await observer?.leg(self, observed: .signalingClosed(code: code, reason: reason))
        }
    }

    /// webrtcbin cannot restart ICE: the offerer rebuilds its peer and offers again; the
    /// answerer is rebuilt when that new offer arrives.
    private func rebuildIfOfferer(_ peer: PeerConnection) async {
        guard await peer.role == .offerer, !isClosed else { return }
        do { try await peer.rebuild() } catch {
            await observer?.leg(self, observed: .rebuildFailed(error))
        }
    }

    /// Keeps a task of the leg's (a facade's timer or watch), cancelled when the leg closes.
    package func keep(_ task: Task<Void, Never>) { tasks.keep(task) }

    // MARK: Recording state (see CallLeg+Recording)

    enum RecordingKept { case closed, displaced(ActiveRecording?) }

    /// Keeps `recording` as the leg's, unless the leg closed meanwhile.
    func keepRecording(_ recording: ActiveRecording) -> RecordingKept {
        state.withLock { state in
            guard state.phase != .closed else { return .closed }
            defer { state.recording = recording }
            return .displaced(state.recording)
        }
    }

    func withRecording<T>(_ body: (ActiveRecording?) -> T) -> T { state.withLock { body($0.recording) } }

    func takeRecording() -> ActiveRecording? {
        state.withLock { state in defer { state.recording = nil }; return state.recording }
    }

    // MARK: Close

    /// Ends this side: the recording is finalised while the media still runs, then the
    /// channels close (`closing` says how; at once by default), then the peer and the signaling
    /// (after `bye` when asked). Idempotent. Returns what the recording holds, or why it could
    /// not be finalised; nil when none ran or the leg had closed already.
    @discardableResult
    package func close(sendBye: Bool, closing: @Sendable (DataChannelHandle) async -> Void = { $0.close() })
        async -> Result<RecordingSummary, RecordingError>? {
        let taken = state.withLock { state -> (PeerConnection?, [DataChannelHandle], ActiveRecording?)? in
            guard state.phase != .closed else { return nil }
            state.phase = .closed
            // A closed leg holds no media: what the call learned (codecs, kinds) stays readable.
            defer { state.recording = nil; state.channels = []; state.peer = nil }
            return (state.peer, state.channels, state.recording)
        }
        guard let (peer, channels, recording) = taken else { return nil }
        tasks.cancelAll()
        var finalised: Result<RecordingSummary, RecordingError>?
        if let recording {
            do { finalised = .success(try await recording.stop()) } catch { finalised = .failure(error) }
        }
        for channel in channels { await closing(channel) }
        await signaling.close(peer: peer, sendBye: sendBye)
        return finalised
    }
}
