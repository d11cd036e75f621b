import Foundation
import GLibCore
import GStreamer
import MediaPipeline
import MediaRuntime
import Synchronization

/// One `webrtcbin` incarnation inside the peer's pipeline.
///
/// A peer connection is rebuilt by replacing its session (webrtcbin has no ICE restart); the
/// pipeline, the send graph and the data channel handles stay. Incoming streams and remote data
/// channels are attached right in webrtcbin's signal handlers, because a src pad that is not
/// linked when the first packet arrives stops its stream for good. What the session does to the
/// elements webrtcbin makes inside itself is one `SessionElementSetup` per kind of element.
final class PeerSession: Sendable {
    enum Input: Sendable {
        case negotiationNeeded
        case localCandidate(mlineIndex: Int, candidate: String)
        case statesChanged(WebRTCStates)
        case remoteStream(RemoteStream)
        case remoteDataChannel(DataChannelHandle)
        case adoptedDataChannel(remoteLabel: String, configuredLabel: String)
        /// Something here (a decoder, a recorder) asked the far end for a key frame.
        case keyFrameWanted
        /// The far end's transport-wide feedback on what we sent (`TransportFeedbackSetup`).
        case transportFeedback([TransportFeedbackPacket])
        /// The far end closed its connection (`FarEndCloseWatch`).
        case farEndClosed(String)
        case failure(String)
    }

    /// Where a session's signal handlers hand what happened: the session's number and the input.
    typealias Delivery = @Sendable (Int, Input) -> Void

    let number: Int
    let webrtc: WebRTCBin
    private let pipeline: Pipeline
    /// The DTLS certificate every transport of this webrtcbin uses (nil: GStreamer's default).
    let certificate: DTLSCertificate?
    /// The session's one state, behind one lock (a class, so webrtcbin's signal handlers share it).
    private struct State {
        /// The send graph's tee pads feeding webrtcbin.
        var teePads: [(tee: Element, pad: Pad)] = []
        var receivers: [ReceiveMedia] = []
        /// The RTP tees in front of each incoming branch, where recorders tap incoming streams.
        var incomingTees: [IncomingRTPTee] = []
        /// SSRC → kind of incoming streams, from webrtcbin's src pad caps when each pad appeared.
        var incomingKinds: [UInt: MediaKind] = [:]
        var connections: [SignalConnection] = []
        /// Send outputs not linked yet: see `linkOutputs()`.
        var pendingOutputs: [PendingOutput] = []
        /// The transceivers of the video we send, whose FEC share adaptation turns.
        var videoTransceivers: [Object] = []
        /// The probes on incoming video that see key-frame requests leave for the far end.
        var keyFrameRequestProbes: [PadProbe] = []
        /// RTP packets per direction (what we link to webrtcbin, what its src pads bring), for
        /// `MediaDirectionWatch`, and the probes that count them.
        var directionCounts: [MediaDirection: ArrivalCount] = [:]
        var countingProbes: [PadProbe] = []
    }
    private let state = Locked(State())
    /// The transport's RTP sessions, whose report interval follows the loss we see.
    private let rtpSessions: RTPSessionSetup
    /// The incoming streams' jitter buffers, whose wait for resent packets follows it too.
    private let jitterBuffers: JitterBufferSetup
    /// Keeps the bundle funnel's repeated segment events off the send path.
    private let sendSegments: SendSegmentSetup
    private let elementSetups: SessionElementSetups
    /// Takes the jitter out of the far end's sender reports before rtpbin lines its streams up.
    private let senderReports = SenderReportSmoothing()
    /// webrtcbin's RTP sessions and jitter buffers as they were made, for tests that watch the
    /// packets between them.
    var receivePath: (sessions: [Element], jitterBuffers: [Element]) { (rtpSessions.all, jitterBuffers.all) }
    /// The send path's segment filters, for tests that count what they kept back.
    var segmentFilters: [RepeatedSegmentFilter] { sendSegments.segmentFilters }
    /// Sends a lost DTLS handshake flight again sooner than OpenSSL would.
    private let handshakeReplay: HandshakeReplay
    /// Sends the far end connectivity checks once this side is through and it is not.
    private let connectivityNudge: ConnectivityNudge
    private let arrivals: ArrivalCount
    /// Which of the far end's resend requests are answered (see `RetransmissionBudget`).
    let retransmissions: RetransmissionGate

    struct PendingOutput {
        var kind: MediaKind
        var tee: Pad
        var webrtc: Pad
    }

    /// An incoming stream's RTP tee, as `RemoteStream.rtpTee` has it.
    struct IncomingRTPTee {
        var kind: MediaKind
        var tee: Element
    }

    /// Creates the webrtcbin, wires its signals to `deliver`, requests the pads for the send
    /// outputs and adds it to the pipeline (still in NULL: the caller brings it up, then calls
    /// `linkOutputs()`).
    init(number: Int, configuration: PeerConfiguration, pipeline: Pipeline, send: SendMedia?, outputTees: [MediaKind: Element],
         receiveOnlyCaps: [MediaKind: String], channels: ChannelRegistry, compiler: PipelineCompiler, playback: RemotePlayback,
         deliver: @escaping Delivery) throws(PeerError) {
        self.number = number
        self.pipeline = pipeline
        let webrtc = try Self.makeWebRTCBin(number: number, configuration: configuration)
        self.webrtc = webrtc
        do throws(GStreamerError) {
            certificate = try configuration.dtlsKeyType.map { keyType throws(GStreamerError) in try DTLSCertificate.shared(keyType) }
        } catch {
            throw .setup("DTLS certificate: \(error)")
        }
        let (replay, nudge, arrivals, retransmissions) = (HandshakeReplay(), ConnectivityNudge(), ArrivalCount(), RetransmissionGate())
        (handshakeReplay, connectivityNudge, self.arrivals, self.retransmissions) = (replay, nudge, arrivals, retransmissions)
        // The transport's libnice ends: arrivals, handshake replay, connectivity checks.
        let transport = TransportSetup(webrtc: webrtc, arrivals: arrivals, replay: configuration.replaysHandshake ? replay : nil,
                                       nudge: configuration.nudgesConnectivityChecks ? nudge : nil,
                                       farEndClosed: { reason in deliver(number, .farEndClosed(reason)) })
        rtpSessions = RTPSessionSetup(rtcpMinInterval: configuration.rtcpMinInterval)
        jitterBuffers = JitterBufferSetup()
        sendSegments = SendSegmentSetup()
        // Only a sender whose rate adapts reads the feedback (30 messages a second from GStreamer).
        let parameters = configuration.media.parameters
        let feedback = parameters.lossRecovery.bandwidthAdaptation && parameters.videoCallEnabled && send != nil
            ? [TransportFeedbackSetup { packets in deliver(number, .transportFeedback(packets)) }] : [any SessionElementSetup]()
        let setups: [any SessionElementSetup] = [transport, sendSegments, RetransmissionRequestSetup(gate: retransmissions),
                                                 CertificateSetup(pem: certificate?.pem), rtpSessions, jitterBuffers]
        elementSetups = SessionElementSetups(setups + feedback)
        let recovery = configuration.media.parameters.lossRecovery
        var handlers: [SignalConnection] = []
        do throws(GStreamerError) {
            handlers += try connectNegotiation(nudge: configuration.nudgesConnectivityChecks ? nudge : nil, deliver)
            handlers += try connectStates(deliver)
            handlers.append(try connectElementSetups(deliver))
            handlers.append(try senderReports.watch(webrtc))
            handlers.append(try connectDataChannels(channels, deliver))
            handlers.append(try connectIncomingStreams(media: configuration.media, compiler: compiler, send: send, playback: playback, deliver))
            handlers.append(try connectNewTransceivers(recovery, deliver))
            try pipeline.add(webrtc)
            try requestSendOutputs(outputTees, recovery)
            try addReceiveOnlyTransceivers(receiveOnlyCaps, recovery)
        } catch {
            for handler in handlers { handler.cancel() }
            throw .setup(error.description)
        }
        state.withLock { $0.connections = handlers }
        InstanceCounter.increment("PeerSession")
    }

    deinit { InstanceCounter.decrement("PeerSession") }

    // MARK: Signal wiring (one handler per concern; each captures only what it uses)

    /// Negotiation needed, and each local candidate (which the nudge also learns).
    private func connectNegotiation(nudge: ConnectivityNudge?, _ deliver: @escaping Delivery) throws(GStreamerError) -> [SignalConnection] {
        let number = self.number
        return [
            try webrtc.onNegotiationNeeded { deliver(number, .negotiationNeeded) },
            try webrtc.onICECandidate { mline, candidate in
                // Never offered, so no pair is made of it (see `SDPInspection.isLinkLocalCandidate`).
                guard !SDPInspection.isLinkLocalCandidate(candidate) else { return }
                nudge?.noteLocalCandidate(candidate)
                deliver(number, .localCandidate(mlineIndex: mline, candidate: candidate))
            },
        ]
    }

    /// webrtcbin's four states, read in each notify handler (see `WebRTCStates`).
    private func connectStates(_ deliver: @escaping Delivery) throws(GStreamerError) -> [SignalConnection] {
        let number = self.number
        return try webrtc.onStateChange { webrtc in deliver(number, .statesChanged(WebRTCStates(webrtc))) }
    }

    /// Hands each element webrtcbin makes inside itself to the set-up of its kind.
    private func connectElementSetups(_ deliver: @escaping Delivery) throws(GStreamerError) -> SignalConnection {
        let number = self.number, setups = elementSetups
        return try webrtc.onDeepElementAdded { element in
            do throws(GStreamerError) { try setups.configure(element) } catch {
                deliver(number, .failure("cannot configure \(element.factoryName ?? "an element") of the transport: \(error)"))
            }
        }
    }

    /// Binds each channel the far end opens to its handle (adopting a configured one when the
    /// label differs but the kind fits).
    private func connectDataChannels(_ channels: ChannelRegistry, _ deliver: @escaping Delivery) throws(GStreamerError) -> SignalConnection {
        let number = self.number
        return try webrtc.onDataChannel { channel in
            let reliable = channel.ordered && channel.maxRetransmits < 0 && channel.maxPacketLifetime < 0
            let (handle, adoptedAs) = channels.handleForRemote(label: channel.label, reliable: reliable)
            do throws(GStreamerError) {
                try handle.bind(channel)
                if let adoptedAs { deliver(number, .adoptedDataChannel(remoteLabel: channel.label, configuredLabel: adoptedAs)) }
                deliver(number, .remoteDataChannel(handle))
            } catch {
                deliver(number, .failure("cannot attach remote data channel '\(channel.label)': \(error)"))
            }
        }
    }

    /// Attaches a receive branch to each src pad as it appears, with its playback mute, its
    /// key-frame request watch and its packet count.
    private func connectIncomingStreams(media: MediaConfiguration, compiler: PipelineCompiler, send: SendMedia?, playback: RemotePlayback,
                                        _ deliver: @escaping Delivery) throws(GStreamerError) -> SignalConnection {
        let number = self.number, pipeline = self.pipeline, state = self.state, senderReports = self.senderReports
        return try webrtc.onSourcePadAdded { pad in
            do throws(PeerError) {
                let (stream, receiver, tee) = try Self.attachIncoming(pad: pad, session: number, media: media, compiler: compiler,
                                                                      pipeline: pipeline, send: send)
                do throws(MediaRuntimeError) {
                    try playback.adopt(receiver) { state.withLock { $0.receivers.append(receiver) } }
                } catch {
                    deliver(number, .failure("cannot silence far-end playback: \(error)"))
                }
                // Every key-frame request for this stream, whoever made it, leaves through this pad.
                let requests = stream.kind == .video ? pad.addKeyFrameRequestProbe { deliver(number, .keyFrameWanted) } : nil
                let counted = Self.countPackets(crossing: pad, as: MediaDirection(kind: stream.kind, sending: false), in: state)
                senderReports.watchIncoming(pad, kind: stream.kind)
                state.withLock { state in
                    state.countingProbes.append(counted)
                    state.incomingTees.append(IncomingRTPTee(kind: stream.kind, tee: tee))
                    if let ssrc = stream.ssrc { state.incomingKinds[ssrc] = stream.kind }
                    if let requests { state.keyFrameRequestProbes.append(requests) }
                }
                deliver(number, .remoteStream(stream))
            } catch {
                deliver(number, .failure(error.description))
            }
        }
    }

    /// An answerer's media can land on transceivers webrtcbin makes for the offer's m-lines;
    /// they ask for resends too (in an answer that only keeps what the offer had).
    private func connectNewTransceivers(_ recovery: LossRecovery, _ deliver: @escaping Delivery) throws(GStreamerError) -> SignalConnection {
        let number = self.number
        return try webrtc.onNewTransceiver { transceiver in
            guard recovery.retransmission else { return }
            do throws(GStreamerError) { try transceiver.set(TransceiverProperty.doNack, true) } catch {
                deliver(number, .failure("cannot turn on retransmission: \(error)"))
            }
        }
    }

    // MARK: Transceivers

    /// Requests a tee pad and a webrtcbin sink pad per send output (video first, so m-line order
    /// is stable across rebuilds), with the loss recovery on each one's transceiver; they are
    /// linked later (`linkOutputs()`).
    private func requestSendOutputs(_ outputTees: [MediaKind: Element], _ recovery: LossRecovery) throws(GStreamerError) {
        var outputs: [PendingOutput] = []
        for (kind, tee) in outputTees.sorted(by: { $0.key == .video && $1.key == .audio }) {
            let teePad = try tee.requestPad("src_%u")
            state.withLock { $0.teePads.append((tee, teePad)) }
            let sinkPad = try webrtc.requestPad("sink_%u")
            if let transceiver = try sinkPad.get(WebRTCBin.padTransceiver) {
                try LossRecoverySetup.configure(transceiver, kind: kind, recovery)
                if kind == .video { state.withLock { $0.videoTransceivers.append(transceiver) } }
                // An offer asks for Opus's in-band FEC (an answer's preferences follow the offer).
                if kind == .audio { try transceiver.set(TransceiverProperty.codecPreferences, Caps(LossRecoverySetup.offeredOpusCaps)) }
            }
            outputs.append(PendingOutput(kind: kind, tee: teePad, webrtc: sinkPad))
        }
        state.withLock { $0.pendingOutputs = outputs }
    }

    /// A receive-only transceiver per kind a peer that sends nothing accepts.
    private func addReceiveOnlyTransceivers(_ receiveOnlyCaps: [MediaKind: String], _ recovery: LossRecovery) throws(GStreamerError) {
        for (kind, caps) in receiveOnlyCaps.sorted(by: { $0.key == .video && $1.key == .audio }) {
            if let transceiver = try webrtc.addTransceiver(direction: .recvonly, caps: Caps(caps)) {
                try LossRecoverySetup.configure(transceiver, kind: kind, recovery)
            }
        }
    }

    /// Packets this session's transports have received so far, of any kind: RTP, RTCP, DTLS and
    /// SCTP. The liveness watch reads it instead of a stats sample: a far end that only receives
    /// (a recording bot) sends no media, but its receiver reports and the data channel's
    /// heartbeats still arrive, and reading a counter costs nothing next to webrtcbin's `get-stats`.
    var packetsArrived: UInt64 { arrivals.value }

    /// The RTP tees of this session's incoming streams (each `RemoteStream.rtpTee`), in the order
    /// the streams arrived: where a recorder taps what the far end sends.
    var incomingRTPTees: [IncomingRTPTee] { state.value.incomingTees }

    /// The incoming branches, for controls that reach all of them.
    var incomingBranches: [ReceiveMedia] { state.value.receivers }

    /// The far end's picture size, from the incoming video branch that has seen one.
    var remotePictureSize: PictureSize? { state.value.receivers.lazy.compactMap(\.pictureSize).first }

    /// SSRC → kind for every stream this session sends or receives, read from pad caps.
    var ssrcKinds: [UInt: MediaKind] {
        var kinds: [UInt: MediaKind] = [:]
        let (links, incomingKinds) = state.withLock { ($0.teePads, $0.incomingKinds) }
        for pad in links.map(\.pad) {
            if let structure = pad.currentCaps?.structures.first, let ssrc = structure.uint("ssrc"),
               let kind = structure.string("media").flatMap(MediaKind.init(rawValue:)) {
                kinds[ssrc] = kind
            }
        }
        return kinds.merging(incomingKinds) { local, _ in local }
    }

    /// True once every webrtcbin sink pad we feed carries caps (an offer made before would leave
    /// that media out).
    var sendPadsHaveCaps: Bool {
        state.value.teePads.allSatisfy { $0.pad.peer == nil || $0.pad.peer?.currentCaps != nil }
    }

    /// The media kinds this session sends, for checking that an offer includes them all.
    var sentKinds: Set<String> {
        Set(state.value.teePads.compactMap { $0.pad.currentCaps?.structures.first?.string("media") })
    }

    /// What this side sends, for deciding whether a repeated negotiation request changed anything.
    func localSignature(channels: ChannelRegistry) -> SendSignature {
        let outputs = state.value.teePads.map { SendSignature.Output(linked: $0.pad.peer != nil, mediaType: $0.pad.currentCaps?.mediaType) }
        return SendSignature(outputs: outputs, channels: channels.localConfigs.map(\.label))
    }

    /// Links the send graph's tees to webrtcbin. In a running pipeline this must wait until
    /// webrtcbin is up: a push into its inactive sink pads returns FLUSHING, which the tee passes
    /// upstream, and that stops the send graph's queues and live sources for good.
    ///
    /// With `announcingCaps`, each tee then hands its new branch the stream's caps at once
    /// (`announceCaps(through:)`): an answerer links its outputs when the offer comes and answers
    /// once webrtcbin's pads have caps, which otherwise come with each stream's next buffer
    /// (up to a frame or an audio packet later, 14–19 ms p50 of every call's set-up).
    func linkOutputs(except held: Set<MediaKind> = [], announcingCaps: Bool = false) throws(PeerError) {
        let outputs = state.withLock { state in
            defer { state.pendingOutputs.removeAll { !held.contains($0.kind) } }
            return state.pendingOutputs.filter { !held.contains($0.kind) }
        }
        for output in outputs {
            do throws(GStreamerError) { try output.tee.link(to: output.webrtc) } catch { throw .setup(error.description) }
            let probe = Self.countPackets(crossing: output.tee, as: MediaDirection(kind: output.kind, sending: true), in: state)
            state.withLock { $0.countingProbes.append(probe) }
        }
        if announcingCaps { Self.announceCaps(through: outputs.compactMap { $0.tee.parentElement?.staticPad("sink") }) }
    }

    /// Sends a custom event into each tee's input, which carries the caps to the branches just
    /// linked (`Pad.sendCustomDownstreamEvent`). The event waits for the tee's stream lock, which
    /// a buffer held up inside webrtcbin (its transport holds data until DTLS is through) keeps
    /// taken, so it is sent from one serial queue of its own, never from the peer's order of
    /// operations: at most one thread waits, and a branch whose announcement waits gets its caps
    /// with the next buffer, as without it.
    private static func announceCaps(through teeInputs: [Pad]) {
        guard !teeInputs.isEmpty else { return }
        capsAnnouncements.async { for input in teeInputs { input.sendCustomDownstreamEvent(named: capsAnnouncementEvent) } }
    }

    static let capsAnnouncements = DispatchQueue(label: "ecvkit.caps-announcements", qos: .userInitiated)
    /// The custom event's name: nothing downstream acts on it.
    static let capsAnnouncementEvent = "ecvkit-caps-announcement"

    /// Counts the buffers crossing `pad` under `direction` (one atomic add each).
    private static func countPackets(crossing pad: Pad, as direction: MediaDirection, in state: Locked<State>) -> PadProbe {
        let count = state.withLock { state in
            if let existing = state.directionCounts[direction] { return existing }
            let created = ArrivalCount()
            state.directionCounts[direction] = created
            return created
        }
        return pad.addBufferProbe { _, _ in count.add(); return .pass }
    }

    /// RTP packets so far in each direction that has been linked or has arrived.
    var packetsByDirection: [MediaDirection: UInt64] { state.value.directionCounts.mapValues(\.value) }

    /// Audio minus video of the far end's streams against their capture times, in ms (see
    /// `SenderReportSmoothing.audioVideoOffsetMs`); nil until both have packets and reports.
    var receivedAudioVideoOffsetMs: Double? { senderReports.audioVideoOffsetMs }

    /// Sets the share of FEC parity packets for the video we send (no effect without FEC).
    func setVideoFECPercentage(_ percent: Int) throws(GStreamerError) {
        for transceiver in state.value.videoTransceivers where transceiver.hasProperty(TransceiverProperty.fecPercentage.name) {
            try transceiver.set(TransceiverProperty.fecPercentage, UInt(min(100, max(0, percent))))
        }
    }

    /// The floor under the RTP session's report interval as it is set now (what `applyFeedback`
    /// moves); nil before webrtcbin made its session.
    var rtcpMinInterval: Duration? { rtpSessions.rtcpMinInterval }

    /// Moves the RTCP allowance (and with it how soon a NACK or PLI can go out) and the jitter
    /// buffer's wait for resent packets; see `LossResponse`. (Whether the jitter buffers ask for
    /// resends at all is `askForResends(kinds:)`'s, which runs before this every tick.) Only what differs
    /// from `previous` is set: a key-frame hurry moves RTCP alone, and webrtcbin's `latency` (which
    /// walks rtpbin's sessions and jitter buffers under their locks) is left alone while a stream
    /// is being set up.
    func applyFeedback(_ feedback: LossResponse.Feedback, previous: LossResponse.Feedback) throws(GStreamerError) {
        if feedback.rtcpBitsPerSecond != previous.rtcpBitsPerSecond || feedback.rtcpMinInterval != previous.rtcpMinInterval {
            try rtpSessions.setReporting(bitsPerSecond: feedback.rtcpBitsPerSecond, minInterval: feedback.rtcpMinInterval)
        }
        guard feedback.jitterBufferLatencyMs != previous.jitterBufferLatencyMs else { return }
        let latency = UInt(max(0, feedback.jitterBufferLatencyMs))
        try webrtc.set(WebRTCBin.latency, latency)
        try jitterBuffers.setLatency(latency)
    }

    /// Decides, for each jitter buffer whose stream's kind is now known, whether it asks for
    /// resends (see `JitterBufferSetup.askForResends(kinds:)`).
    func askForResends(kinds: [UInt: MediaKind]) throws(GStreamerError) { try jitterBuffers.askForResends(kinds: kinds) }

    /// What the far end's transport-wide feedback says of the last 300 ms; nil until feedback arrived.
    var transportWideFeedback: TransportWideFeedback? { rtpSessions.transportWideFeedback }

    /// The kinds whose send output waits to be linked (an answerer's until the offer came, an
    /// offerer's video until the answer chose its codec).
    var pendingKinds: [MediaKind] { state.value.pendingOutputs.map(\.kind) }

    /// Leaves `kind` out: the remote offered nothing we can send it as.
    func dropPendingOutput(_ kind: MediaKind) {
        state.withLock { $0.pendingOutputs.removeAll { $0.kind == kind } }
    }

    /// Sets the `codec-preferences` of the transceiver behind `kind`'s sink pad, before any caps
    /// reached it: webrtcbin matches the remote offer against them and answers with them.
    func setCodecPreferences(_ kind: MediaKind, _ caps: Caps) throws(GStreamerError) {
        guard let pad = state.value.pendingOutputs.first(where: { $0.kind == kind })?.webrtc else { return }
        guard let transceiver = try pad.get(WebRTCBin.padTransceiver) else {
            throw .notSupported("webrtcbin's \(pad.name) has no transceiver")
        }
        try transceiver.set(TransceiverProperty.codecPreferences, caps)
    }

    /// Adds a candidate the far end sent (the nudges before ICE is through go to it too).
    /// A far end's link-local candidate is left out, as ours are (see
    /// `SDPInspection.isLinkLocalCandidate`).
    func addRemoteCandidate(mlineIndex: UInt, candidate: String) throws(GStreamerError) {
        guard !SDPInspection.isLinkLocalCandidate(candidate) else { return }
        try webrtc.addICECandidate(mlineIndex: mlineIndex, candidate: candidate)
        connectivityNudge.noteRemoteCandidate(candidate)
    }

    /// Takes the session out of the pipeline: signals off, send outputs unlinked from webrtcbin
    /// (so the tees keep the encoders running), incoming branches and webrtcbin removed, and
    /// everything inside webrtcbin stopped, so that dropping the session cannot hang.
    ///
    /// Returns what webrtcbin's own stop left running (stopped here; see
    /// `Element.stopWithEverythingInside()`), for the caller to report.
    @discardableResult
    func tearDown() -> [String] {
        let taken = state.withLock { state in defer { state = State() }; return state }
        for handler in taken.connections { handler.cancel() }
        handshakeReplay.stop()
        connectivityNudge.stop()
        elementSetups.release()
        senderReports.release()
        for probe in taken.countingProbes { probe.cancel() }
        for link in taken.teePads {
            if let peer = link.pad.peer { link.pad.unlink(from: peer) }
            link.tee.releaseRequestPad(link.pad)
        }
        // Downstream first, as GStreamer stops a pipeline: a receive branch's sink lets go of the
        // stream's thread when it stops, and the tee's input is then free to stop.
        for receiver in taken.receivers { receiver.elements.remove(from: pipeline) }
        for incoming in taken.incomingTees { pipeline.stopAndRemove(incoming.tee) }
        // GStreamer 1.22: messages webrtcbin's internals post while it is removed and stopped
        // stay queued on the pipeline bus and keep transports alive, so drop them.
        pipeline.setBusFlushing(true)
        // Stopped with its state locked before it leaves (a state change the pipeline makes
        // meanwhile would start it again), then what it left running inside: its last
        // reference goes with this session, and disposing it while a task inside still runs
        // waits for that task for good (a teardown that hung in `gst_task_join`).
        webrtc.stopForRemoval()
        pipeline.remove(webrtc)
        let leftRunning = webrtc.stopWithEverythingInside()
        pipeline.setBusFlushing(false)
        return leftRunning
    }
}

/// A count bumped on the transports' streaming threads and read by the liveness watch.
final class ArrivalCount: Sendable {
    private let count = Atomic<UInt64>(0)
    func add() { count.add(1, ordering: .relaxed) }
    var value: UInt64 { count.load(ordering: .relaxed) }
}
