import Foundation
import GLibCore
import GStreamer
import MediaPipeline
import MediaRuntime
import Synchronization

/// A WebRTC peer connection over `webrtcbin`: real ICE (libnice), DTLS-SRTP and SCTP.
///
/// Signaling is injected: outgoing messages go to `sendSignaling`, incoming ones are handed to
/// `receive(_:)`. Everything the peer does happens in one order: webrtcbin's callbacks (from its
/// own threads), remote signaling, rebuilds and the controls of the layers above (`perform`) are
/// queued into one inbox that this actor works through one item at a time, so no negotiation step
/// interleaves with another at an `await`.
public actor PeerConnection {
    public enum Role: String, Sendable { case offerer, answerer }

    public nonisolated let configuration: PeerConfiguration
    public private(set) var role: Role
    private let sendSignaling: @Sendable (SignalingMessage) -> Void
    private let broadcaster = Broadcaster<PeerEvent>()
    let channels = ChannelRegistry()
    let compiler: PipelineCompiler
    private let playback = RemotePlayback()

    private var pipeline: Pipeline?
    /// The running send graph: mute, camera switch and bitrate controls live here.
    package private(set) var media: SendMedia?
    private var outputTees: [MediaKind: Element] = [:]
    /// The video codecs this end offers and accepts (nil without video): see `VideoNegotiation`.
    var videoPreference: VideoCodecPreference?
    private var receiveOnlyCaps: [MediaKind: String] = [:]
    var session: PeerSession?
    private var sessionCount = 0
    private(set) var started = false
    private var closed = false

    var negotiation = NegotiationState()
    private var states = ObservedStates()
    private var watchdog: Task<Void, Never>?
    /// The sender's rate control (see `adaptBandwidth`); nil when adaptation is off or no video is sent.
    var bandwidth: BandwidthEstimator?
    var lastTransportWideFeedback: TransportWideFeedback?
    /// The decision the encoders run with now.
    var appliedBandwidth: BandwidthEstimator.Decision?
    /// The receiving side's answer to loss (see `LossResponse`); nil without retransmission.
    var lossResponse: LossResponse?
    /// Reports a negotiated direction that carries nothing (see `MediaDirectionWatch`).
    var directionWatch = MediaDirectionWatch()
    /// Asks again for a key frame while the far end's picture stays frozen (see `FrozenPictureWatch`).
    var pictureWatch = FrozenPictureWatch()
    /// The liveness watch's last stats sample, of session `session`, for `stats(reusingWithin:)`.
    private var lastSample: (stats: PeerStats, session: Int, at: ContinuousClock.Instant)?
    /// Liveness ticks so far (see `needsStatsSample`).
    private var ticks = 0
    private var inboxTask: Task<Void, Never>?
    private nonisolated let inbox: AsyncStream<Work>.Continuation
    private let inboxStream: AsyncStream<Work>

    /// One item of the peer's order of operations.
    enum Work: Sendable {
        /// A webrtcbin callback of session `number`.
        case session(number: Int, PeerSession.Input)
        /// Remote signaling, a rebuild, or a control from above.
        case operation(@Sendable (isolated PeerConnection) async -> Void)
    }

    public init(configuration: PeerConfiguration, role: Role,
                sendSignaling: @escaping @Sendable (SignalingMessage) -> Void) {
        self.configuration = configuration
        self.role = role
        self.sendSignaling = sendSignaling
        let media = configuration.media
        compiler = PipelineCompiler(catalog: media.catalog ?? LiveCatalog.shared, presets: media.presets)
        (inboxStream, inbox) = AsyncStream.makeStream(of: Work.self)
        InstanceCounter.increment("PeerConnection")
    }

    deinit { InstanceCounter.decrement("PeerConnection") }

    /// Every event from now on (each call is an independent subscriber).
    public nonisolated func events() -> AsyncStream<PeerEvent> { broadcaster.subscribe() }

    public var peerState: PeerState { states.unified }
    public var signalingState: SignalingState { states.signaling }
    public var iceConnectionState: ICEConnectionState { states.ice }
    public var iceGatheringState: ICEGatheringState { states.gathering }
    public var connectionState: ConnectionState { states.connection }

    // MARK: Start

    /// Builds the pipeline (send graph, webrtcbin, configured data channels) and starts it.
    /// The offerer then creates and sends its offer; the answerer waits for one.
    public func start(dataChannels: [DataChannelConfig] = []) async throws(PeerError) {
        guard !closed else { throw .closed }
        guard pipeline == nil else { return }
        let pipeline = Pipeline(name: "peer")
        self.pipeline = pipeline
        try buildSendSide(into: pipeline)
        // The offerer announces transport-cc; an answerer uses the id of the offer it gets.
        if role == .offerer, configuration.media.parameters.lossRecovery.bandwidthAdaptation {
            do throws(MediaRuntimeError) { try media?.setTransportWideCC(id: LossRecoverySetup.offeredTransportWideCCID) } catch {
                emit(.error("transport-wide congestion feedback is off: \(error)"))
            }
        }
        for config in dataChannels where config.enabled { channels.registerLocal(config) }
        inboxTask = Task { [weak self, inboxStream] in
            for await work in inboxStream {
                guard let self else { return }
                switch work {
                case .session(let number, let input): await self.handle(input, from: number)
                case .operation(let body): await body(self)
                }
            }
        }
        try makeSession()
        do throws(GStreamerError) {
            try await pipeline.play(timeout: .seconds(15))
        } catch {
            throw .setup("the pipeline did not start: \(error)")
        }
        media?.startFileLoops()
        started = true
        startWatchdog()
        if role == .offerer { await perform { await $0.negotiate() } }
    }

    // MARK: The order of operations

    /// Runs `body` in this peer's one order of operations: after everything submitted before it
    /// (remote signaling, webrtcbin's callbacks, rebuilds, controls), before everything after it.
    /// Returns nil when the peer closed first and `body` never ran. Never call it from inside an
    /// operation (it would wait for itself).
    @discardableResult
    public nonisolated func perform<T: Sendable>(_ body: @escaping @Sendable (isolated PeerConnection) async -> T) async -> T? {
        await withCheckedContinuation { (continuation: CheckedContinuation<T?, Never>) in
            let reply = OperationReply(continuation)
            submit { peer in reply.resume(await body(peer)) }
            // Not queued (closed), or dropped unrun when the peer closed: the reply's deinit answers nil.
        }
    }

    /// Queues `body` in the order of operations without waiting for it; false when the peer is
    /// closed. Calls made one after another from one thread run in that order.
    @discardableResult
    public nonisolated func submit(_ body: @escaping @Sendable (isolated PeerConnection) async -> Void) -> Bool {
        if case .terminated = inbox.yield(.operation(body)) { return false }
        return true
    }

    private func buildSendSide(into pipeline: Pipeline) throws(PeerError) {
        let media = configuration.media
        do throws(PipelineCompileError) {
            if media.parameters.videoCallEnabled {
                videoPreference = media.sendsPreEncodedMedia
                    ? VideoCodecPreference(codecs: [try VideoCodecPreference.preferred(media.parameters)], restricted: true)
                    : try VideoCodecPreference.resolve(media.parameters, catalog: compiler.catalog)
            }
        } catch {
            throw .unsupported(error)
        }
        guard media.sendsMedia else {
            receiveOnlyCaps = media.receivesMedia ? Self.receiveOnlyCaps(for: media.parameters, video: videoPreference) : [:]
            return
        }
        let graph: PipelineGraph
        do throws(PipelineCompileError) {
            graph = try compileSendGraph(parameters: media.parameters)
        } catch {
            throw .unsupported(error)
        }
        do {
            let send = try SendMedia(graph: graph, into: pipeline)
            self.media = send
            for output in graph.outputs {
                guard let source = send.output(output.kind) else { continue }
                let tee = try Element(factory: "tee", name: "out_\(output.kind.rawValue)")
                try tee.set("allow-not-linked", true)
                try pipeline.add(tee)
                try source.element.link(pad: source.pad, to: tee, pad: nil)
                outputTees[output.kind] = tee
            }
        } catch let error as MediaRuntimeError {
            throw .media(error)
        } catch let error as GStreamerError {
            throw .media(.gstreamer(error))
        } catch {
            throw .setup("\(error)")
        }
    }

    /// The send graph for `parameters` (the configured ones, or the same with the codec a
    /// negotiation chose), with the local preview when one is configured.
    func compileSendGraph(parameters: MediaParameters) throws(PipelineCompileError) -> PipelineGraph {
        let media = configuration.media
        if media.sendsPreEncodedMedia { return try compiler.compilePreEncodedSend(parameters: parameters) }
        let compiled = try compiler.compileSend(parameters: parameters, video: media.video, audio: media.audio)
        return media.localPreview.map { compiled.addingLocalPreview(named: $0) } ?? compiled
    }

    /// Codec preferences for a peer that only receives: Opus, and every video codec it accepts.
    static func receiveOnlyCaps(for parameters: MediaParameters, video: VideoCodecPreference?) -> [MediaKind: String] {
        var caps: [MediaKind: String] = [MediaKind.audio: "application/x-rtp,media=audio,encoding-name=OPUS,payload=111,clock-rate=48000"]
        if parameters.videoCallEnabled, let video { caps[.video] = video.offerCaps }
        return caps
    }

    private func makeSession() throws(PeerError) {
        guard let pipeline else { throw .closed }
        sessionCount += 1
        let inbox = self.inbox
        let session = try PeerSession(
            number: sessionCount, configuration: configuration, pipeline: pipeline, send: media, outputTees: outputTees,
            receiveOnlyCaps: receiveOnlyCaps, channels: channels, compiler: compiler, playback: playback,
            deliver: { number, input in inbox.yield(.session(number: number, input)) })
        self.session = session
        negotiation = NegotiationState()
        // Data channels need webrtcbin in READY or later, and must exist before the first offer.
        session.webrtc.requestState(.ready)
        for config in channels.localConfigs where role == .offerer || config.negotiated {
            createChannel(config, on: session)
        }
        if started { session.webrtc.syncStateWithParent() }
        // An answerer's outputs wait for the offer: they must go out with its payload types, and
        // webrtcbin matches an offer only to pads that have not seen other caps yet. An
        // offerer's video waits for the answer: its offer lists every codec (see `VideoNegotiation`).
        if role == .offerer { try offerEveryVideoCodec(on: session) }
    }

    // MARK: Data channels

    /// A data channel with `config`. The offerer (or both sides, for negotiated channels) creates
    /// it; the answerer binds the handle when the remote side opens a channel with this label.
    /// Sending before it opens queues the message.
    public func openDataChannel(_ config: DataChannelConfig) -> DataChannelHandle {
        let alreadyOpened = channels.localConfigs.contains { $0.label == config.label }
        channels.registerLocal(config)
        let (handle, _) = channels.handle(for: config.label)
        if !alreadyOpened, let session, role == .offerer || config.negotiated { createChannel(config, on: session) }
        return handle
    }

    private func createChannel(_ config: DataChannelConfig, on session: PeerSession) {
        let (handle, _) = channels.handle(for: config.label)
        do throws(GStreamerError) {
            let channel = try session.webrtc.createDataChannel(label: config.label, options: config.webrtcOptions)
            try handle.bind(channel)
        } catch {
            broadcaster.yield(.error("cannot create data channel '\(config.label)': \(error)"))
        }
    }

    // MARK: Inbox

    private func handle(_ input: PeerSession.Input, from number: Int) async {
        guard number == session?.number, !closed else { return }
        switch input {
        case .negotiationNeeded:
            broadcaster.yield(.negotiationNeeded)
            guard started, role == .offerer else { return }
            await negotiate()
        case .localCandidate(let mline, let candidate):
            sendSignaling(.candidate(mlineIndex: mline, mid: negotiation.localMids[mline], candidate: candidate))
        case .statesChanged(let snapshot):
            updateStates(snapshot)
        case .remoteStream(let stream):
            noteActivity()
            broadcaster.yield(.remoteStream(stream))
        case .remoteDataChannel(let handle):
            broadcaster.yield(.remoteDataChannel(handle))
        case .adoptedDataChannel(let remoteLabel, let configuredLabel):
            broadcaster.yield(.adoptedDataChannel(remoteLabel: remoteLabel, configuredLabel: configuredLabel))
        case .keyFrameWanted:
            if let session { hurryFeedback(session: session) }
        case .failure(let message):
            broadcaster.yield(.error(message))
        }
    }

    func emit(_ event: PeerEvent) { broadcaster.yield(event) }
    func send(_ message: SignalingMessage) { sendSignaling(message) }

    // MARK: States

    private func updateStates(_ snapshot: WebRTCStates) {
        let changes = states.take(snapshot)
        for change in changes { broadcaster.yield(change) }
        publishUnifiedState()
    }

    func publishUnifiedState() {
        guard let unified = states.updateUnified() else { return }
        if unified == .connected { sendStartKeyFrames() }
        broadcaster.yield(.stateChanged(unified))
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

    private func noteActivity() { states.lastActivity = .now }

    private func startWatchdog() {
        let disconnectedAfter = configuration.disconnectedAfter, failedAfter = configuration.failedAfter
        watchdog = Task { [weak self] in
            while !Task.isCancelled {
                // Cancelled: the wait ends early and the loop or the guard after it decides.
                try? await Task.sleep(for: .milliseconds(500))
                guard let self else { return }
                await self.checkLiveness(disconnectedAfter: disconnectedAfter, failedAfter: failedAfter)
            }
        }
    }

    /// webrtcbin 1.22 rarely notices a vanished peer, so we watch what the transport receives
    /// ourselves: silence while connected reports disconnected, then failed. Any packet counts
    /// (`PeerSession.packetsArrived`), so a far end that sends no media (a recording bot) stays
    /// alive by its receiver reports; a stats sample is taken only for what needs one.
    private func checkLiveness(disconnectedAfter: Duration, failedAfter: Duration) async {
        guard states.connection == .connected, let session else {
            directionWatch.pause(now: .now)
            return
        }
        for (direction, everCarried) in directionWatch.check(counts: session.packetsByDirection, now: .now) {
            broadcaster.yield(.mediaSilent(direction, everCarried: everCarried))
        }
        let arrived = session.packetsArrived
        if arrived != states.lastPacketsArrived {
            states.lastPacketsArrived = arrived
            states.lastActivity = .now
        }
        let silence = ContinuousClock.now - states.lastActivity
        states.stall = silence >= failedAfter ? .failed : silence >= disconnectedAfter ? .disconnected : nil
        publishUnifiedState()
        ticks += 1
        guard needsStatsSample(session) else { return }
        // No stats (the session is being replaced or closed): the next tick looks again.
        guard let raw = try? await session.webrtc.stats(), session === self.session else { return }
        // One parse per tick serves the loss response, bandwidth adaptation and the frozen-picture watch.
        let kinds = negotiation.sdpKinds.merging(session.ssrcKinds) { _, fromPads in fromPads }
        var sample = PeerStats(raw: raw, kinds: kinds, timestamp: ProcessInfo.processInfo.systemUptime)
        sample.negotiated = negotiation.negotiated
        let inbound = sample.inbound
        respondToLoss(totalLost: Self.packetsLostOnIncoming(raw), bytesReceived: inbound.reduce(UInt64(0)) { $0 + $1.bytesReceived },
                      kinds: kinds, session: session)
        // A packet is resent at most once a round trip (the last resend may still be on its way).
        session.retransmissions.noteRoundTrip(sample.roundTripTime)
        adaptBandwidth(to: sample, session: session)
        recoverFrozenPicture(videoBytesReceived: inbound.filter { $0.kind == .video }.reduce(0) { $0 + $1.bytesReceived },
                             session: session)
        sample.bandwidth = bandwidth?.decision
        lastSample = (sample, session.number, .now)
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
        return parameters.lossRecovery.retransmission && !session.incomingBranches.isEmpty && ticks % 2 == 0
    }

    // MARK: Stats

    /// A typed stats sample with media kinds mapped from our own pads.
    public func stats() async throws(PeerError) -> PeerStats {
        guard let session else { throw .closed }
        do throws(GStreamerError) {
            let raw = try await session.webrtc.stats()
            let kinds = negotiation.sdpKinds.merging(session.ssrcKinds) { _, fromPads in fromPads }
            var stats = PeerStats(raw: raw, kinds: kinds, timestamp: ProcessInfo.processInfo.systemUptime)
            stats.negotiated = negotiation.negotiated
            stats.bandwidth = bandwidth?.decision
            return stats
        } catch {
            throw .setup("stats: \(error)")
        }
    }

    /// A stats sample at most `maxAge` old: the liveness watch's last one when it is that recent
    /// (it samples every 500 ms or every second while something reads its samples), else a new
    /// one. A recording's once-a-second stats sidecar reads this, so a recording bot asks webrtcbin
    /// for stats once a second, not three times.
    public func stats(reusingWithin maxAge: Duration) async throws(PeerError) -> PeerStats {
        if let last = lastSample, last.session == session?.number, ContinuousClock.now - last.at <= maxAge { return last.stats }
        return try await stats()
    }

    // MARK: Rebuild and close

    /// Replaces webrtcbin with a new one and negotiates again over the same signaling, keeping the
    /// pipeline, the send graph and the data channel handles. The offerer sends a new offer; the
    /// answerer waits for one (an offer with new ICE credentials also rebuilds it by itself).
    public nonisolated func rebuild() async throws(PeerError) {
        let outcome = await perform { peer -> Result<Void, PeerError> in
            guard !peer.closed, peer.pipeline != nil else { return .failure(.closed) }
            do throws(PeerError) { try peer.replaceSession() } catch { return .failure(error) }
            if peer.role == .offerer { await peer.negotiate() }
            return .success(())
        }
        try (outcome ?? .failure(.closed)).get()
    }

    func replaceSession() throws(PeerError) {
        for handle in channels.all { handle.unbind(closing: true) }
        session?.tearDown()
        session = nil
        states = ObservedStates()
        // A new webrtcbin starts with the configured feedback settings.
        lossResponse = nil
        pictureWatch = FrozenPictureWatch()
        directionWatch = MediaDirectionWatch()
        try makeSession()
        broadcaster.yield(.rebuilt(sessionCount - 1))
        publishUnifiedState()
    }

    func becomeAnswerer() { role = .answerer }

    /// Closes every data channel first (GStreamer 1.22 deadlocks otherwise), then stops the
    /// pipeline and releases everything. Idempotent; events end with `.stateChanged(.closed)`.
    public func close() {
        guard !closed else { return }
        closed = true
        watchdog?.cancel()
        for handle in channels.all { handle.finish() }
        session?.tearDown()
        session = nil
        pipeline?.stop()
        pipeline = nil
        media = nil
        outputTees = [:]
        inbox.finish()
        inboxTask?.cancel()
        states.closed = true
        publishUnifiedState()
        broadcaster.finish()
    }

    public var isClosed: Bool { closed }

    /// The pipeline the call runs in, for components that add their own branches (recorders).
    package var mediaPipeline: Pipeline? { pipeline }

    /// The tee carrying an outgoing stream's RTP packets (after our encoder and payloader), where a
    /// recorder taps local media without re-encoding. It outlives rebuilds.
    package func outgoingRTPTee(_ kind: MediaKind) -> Element? { outputTees[kind] }

    /// Silences far-end audio playback (or plays it again), in this session and every later one.
    /// Recordings and audio delivered to the app are not affected: they branch off before it.
    public func setRemoteAudioPlaybackMuted(_ muted: Bool) throws(PeerError) {
        do throws(MediaRuntimeError) {
            try playback.setMuted(muted) { session?.incomingBranches ?? [] }
        } catch {
            throw .media(error)
        }
    }

    public var isRemoteAudioPlaybackMuted: Bool { playback.isMuted }

    /// The picture size we send now (the encoder's input); nil without video or before a frame.
    public var localVideoSize: PictureSize? { media?.videoSize }

    /// The far end's picture size as last received; nil before its first key frame.
    public var remoteVideoSize: PictureSize? { session?.remotePictureSize }

    /// What the last completed negotiation agreed on, by kind.
    public var negotiatedCodecs: [MediaKind: NegotiatedCodec] { negotiation.negotiated }

    /// The pipeline as Graphviz text, for diagnostics.
    public var dot: String { pipeline?.dotDescription ?? "" }
}

/// The answer to one `perform`: resumed once with the operation's result, or with nil when the
/// operation is dropped unrun (the peer closed with it still queued), so no caller waits for ever.
private final class OperationReply<T: Sendable>: Sendable {
    private let continuation: Mutex<CheckedContinuation<T?, Never>?>

    init(_ continuation: CheckedContinuation<T?, Never>) { self.continuation = Mutex(continuation) }

    func resume(_ value: T?) {
        continuation.withLock { pending in
            pending?.resume(returning: value)
            pending = nil
        }
    }

    deinit { resume(nil) }
}
