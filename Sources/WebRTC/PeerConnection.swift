import Foundation
import GLibCore
import GStreamer
import MediaPipeline
import MediaRuntime

/// A WebRTC peer connection over `webrtcbin`: real ICE (libnice), DTLS-SRTP and SCTP.
///
/// Signaling is injected: outgoing messages go to `sendSignaling`, incoming ones are handed to
/// `receive(_:)`. Everything the peer does happens in one order: webrtcbin's callbacks (from its
/// own threads), remote signaling, rebuilds and the controls of the layers above (`perform`) are
/// queued into one inbox that this actor works through one item at a time, so no negotiation step
/// interleaves with another at an `await`.
///
/// Its state is split by concern, each part a value that owns its own fields, each in its own file:
/// the session's lifecycle (here), the order of operations (`+Operations`), the send side
/// (`+SendSide`), data channels (`+DataChannels`), negotiation (`Negotiation`, `VideoNegotiation`),
/// the observed states and the liveness watch (`+Liveness`), stats (`+Stats`), and the answer to
/// loss and bandwidth (`+Bandwidth`).
package actor PeerConnection {
    package enum Role: String, Sendable { case offerer, answerer }

    package nonisolated let configuration: PeerConfiguration
    package private(set) var role: Role
    private let sendSignaling: @Sendable (SignalingMessage) -> Void
    private let broadcaster = Broadcaster<PeerEvent>()
    let channels = ChannelRegistry()
    let compiler: PipelineCompiler
    let playback = RemotePlayback()
    /// The pipeline, the send graph and its tees: what outlives every session.
    var sendSide = SendSide()
    /// Which webrtcbin incarnation runs, and whether the peer has started or closed.
    var lifecycle = Lifecycle()
    var negotiation = NegotiationState()
    /// webrtcbin's states as observed, and the watch that notices a silent far end.
    var liveness = LivenessWatch()
    /// The answer to loss (RTCP pace, jitter buffers, frozen pictures) and to the path's capacity.
    var adaptation = Adaptation()
    /// The one order of operations.
    nonisolated let operations = OperationInbox()
    /// Application media (played audio, barge-in): see AppMedia/ApplicationMedia.swift.
    package let applicationMedia = ApplicationMedia()

    /// The session's lifecycle: the current webrtcbin incarnation (replaced by a rebuild), how
    /// many there were, and whether the peer has started and closed.
    struct Lifecycle {
        var session: PeerSession?
        var sessionCount = 0
        var started = false
        var closed = false
    }

    package init(configuration: PeerConfiguration, role: Role,
                sendSignaling: @escaping @Sendable (SignalingMessage) -> Void) {
        self.configuration = configuration
        self.role = role
        self.sendSignaling = sendSignaling
        let media = configuration.media
        compiler = PipelineCompiler(catalog: media.catalog ?? LiveCatalog.shared, presets: media.presets)
        InstanceCounter.increment("PeerConnection")
    }

    deinit { InstanceCounter.decrement("PeerConnection") }

    /// Every event from now on (each call is an independent subscriber).
    package nonisolated func events() -> AsyncStream<PeerEvent> { broadcaster.subscribe() }

    func emit(_ event: PeerEvent) { broadcaster.yield(event) }
    func send(_ message: SignalingMessage) { sendSignaling(message) }

    var session: PeerSession? { lifecycle.session }
    var started: Bool { lifecycle.started }

    // MARK: Start

    /// Builds the pipeline (send graph, webrtcbin, configured data channels) and starts it.
    /// The offerer then creates and sends its offer; the answerer waits for one.
    package func start(dataChannels: [DataChannelConfig] = []) async throws(PeerError) {
        guard !lifecycle.closed else { throw .closed }
        guard sendSide.pipeline == nil else { return }
        let pipeline = Pipeline(name: "peer")
        sendSide.pipeline = pipeline
        try buildSendSide(into: pipeline)
        startBandwidthAdaptation()
        // The offerer announces transport-cc; an answerer uses the id of the offer it gets.
        if role == .offerer, configuration.media.parameters.lossRecovery.bandwidthAdaptation {
            do throws(MediaRuntimeError) { try media?.setTransportWideCC(id: LossRecoverySetup.offeredTransportWideCCID) } catch {
                emit(.error("transport-wide congestion feedback is off: \(error)"))
            }
        }
        for config in dataChannels where config.enabled { channels.registerLocal(config) }
        startOperations()
        try makeSession()
        do throws(GStreamerError) {
            try await pipeline.play(timeout: .seconds(15))
        } catch {
            throw .setup("the pipeline did not start: \(error)")
        }
        media?.startFileLoops()
        lifecycle.started = true
        startWatchdog()
        if role == .offerer { await perform { await $0.negotiate() } }
    }

    private func makeSession() throws(PeerError) {
        guard let pipeline = sendSide.pipeline else { throw .closed }
        lifecycle.sessionCount += 1
        let operations = self.operations
        let session = try PeerSession(
            number: lifecycle.sessionCount, configuration: configuration, pipeline: pipeline, send: media, outputTees: sendSide.outputTees,
            receiveOnlyCaps: sendSide.receiveOnlyCaps, channels: channels, compiler: compiler, playback: playback,
            deliver: { number, input in operations.deliver(input, from: number) })
        lifecycle.session = session
        negotiation = NegotiationState()
        // Data channels need webrtcbin in READY or later, and must exist before the first offer.
        session.webrtc.requestState(.ready)
        createConfiguredChannels(on: session)
        if lifecycle.started { session.webrtc.syncStateWithParent() }
        // An answerer's outputs wait for the offer: they must go out with its payload types, and
        // webrtcbin matches an offer only to pads that have not seen other caps yet. An
        // offerer's video waits for the answer: its offer lists every codec (see `VideoNegotiation`).
        if role == .offerer { try offerEveryVideoCodec(on: session) }
    }

    // MARK: Rebuild and close

    /// Replaces webrtcbin with a new one and negotiates again over the same signaling, keeping the
    /// pipeline, the send graph and the data channel handles. The offerer sends a new offer; the
    /// answerer waits for one (an offer with new ICE credentials also rebuilds it by itself).
    package nonisolated func rebuild() async throws(PeerError) {
        let outcome = await perform { peer -> Result<Void, PeerError> in
            guard !peer.lifecycle.closed, peer.sendSide.pipeline != nil else { return .failure(.closed) }
            do throws(PeerError) { try peer.replaceSession() } catch { return .failure(error) }
            if peer.role == .offerer { await peer.negotiate() }
            return .success(())
        }
        try (outcome ?? .failure(.closed)).get()
    }

    func replaceSession() throws(PeerError) {
        for handle in channels.all { handle.unbind(closing: true) }
        lifecycle.session?.tearDown()
        lifecycle.session = nil
        // A new webrtcbin starts with fresh states and the configured feedback settings.
        liveness.restart()
        adaptation.restart()
        try makeSession()
        emit(.rebuilt(lifecycle.sessionCount - 1))
        publishUnifiedState()
    }

    func becomeAnswerer() { role = .answerer }

    /// Closes every data channel first (GStreamer 1.22 deadlocks otherwise), then stops the
    /// pipeline and releases everything. Idempotent; events end with `.stateChanged(.closed)`.
    package func close() {
        guard !lifecycle.closed else { return }
        lifecycle.closed = true
        liveness.stopWatchdog()
        for handle in channels.all { handle.finish() }
        lifecycle.session?.tearDown()
        lifecycle.session = nil
        sendSide.stop()
        operations.finish()
        liveness.states.closed = true
        publishUnifiedState()
        broadcaster.finish()
    }

    package var isClosed: Bool { lifecycle.closed }

    /// What the last completed negotiation agreed on, by kind.
    package var negotiatedCodecs: [MediaKind: NegotiatedCodec] { negotiation.negotiated }
}
