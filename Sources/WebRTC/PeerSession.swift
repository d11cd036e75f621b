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
/// linked when the first packet arrives stops its stream for good.
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
        case failure(String)
    }

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
        var incomingTees: [Element] = []
        /// SSRC → kind of incoming streams, from webrtcbin's src pad caps when each pad appeared.
        var incomingKinds: [UInt: MediaKind] = [:]
        var connections: [SignalConnection] = []
        /// Send outputs not linked yet: see `linkOutputs()`.
        var pendingOutputs: [PendingOutput] = []
        /// The transceivers of the video we send, whose FEC share adaptation turns.
        var videoTransceivers: [Object] = []
        /// The transport's RTP sessions, whose report interval follows the loss we see.
        var rtpSessions: [Element] = []
        /// The incoming streams' jitter buffers, whose wait for resent packets follows it too
        /// (webrtcbin's own `latency` reaches only jitter buffers made after it changed).
        var jitterBuffers: [Element] = []
        /// Jitter buffers whose stream's kind is not known yet, so whether they ask for resends
        /// is not decided: see `askForResends(kinds:)`.
        var jitterBuffersUndecided: [Element] = []
        /// The probes that show `handshakeReplay` the transport's datagrams, both ways.
        var handshakeProbes: [PadProbe] = []
        /// The probes counting what the transports receive (see `packetsArrived`).
        var arrivalProbes: [PadProbe] = []
        /// The probes on incoming video that see key-frame requests leave for the far end.
        var keyFrameRequestProbes: [PadProbe] = []
        /// Keeps the bundle funnel's repeated segment events off the send path (one funnel per transport).
        var segmentFilters: [RepeatedSegmentFilter] = []
        /// The probes that put the far end's resend requests to `retransmissions`.
        var retransmissionProbes: [PadProbe] = []
        /// RTP packets per direction (what we link to webrtcbin, what its src pads bring), for
        /// `MediaDirectionWatch`, and the probes that count them.
        var directionCounts: [MediaDirection: ArrivalCount] = [:]
        var countingProbes: [PadProbe] = []
    }
    private let state = Locked(State())
    /// webrtcbin's RTP sessions and jitter buffers as they were made, for tests that watch the
    /// packets between them.
    var receivePath: (sessions: [Element], jitterBuffers: [Element]) { state.withLock { ($0.rtpSessions, $0.jitterBuffers) } }
    /// The send path's segment filters, for tests that count what they kept back.
    var segmentFilters: [RepeatedSegmentFilter] { state.withLock { $0.segmentFilters } }
    /// Sends a lost DTLS handshake flight again sooner than OpenSSL would.
    private let handshakeReplay = HandshakeReplay()
    /// Sends the far end connectivity checks once this side is through and it is not.
    private let connectivityNudge = ConnectivityNudge()
    private let arrivals = ArrivalCount()
    /// Which of the far end's resend requests are answered (see `RetransmissionBudget`).
    let retransmissions = RetransmissionGate()

    struct PendingOutput {
        var kind: MediaKind
        var tee: Pad
        var webrtc: Pad
    }

    /// Creates the webrtcbin, wires its signals to `deliver`, requests the pads for the send
    /// outputs and adds it to the pipeline (still in NULL: the caller brings it up, then calls
    /// `linkOutputs()`).
    init(number: Int, configuration: PeerConfiguration, pipeline: Pipeline, send: SendMedia?, outputTees: [MediaKind: Element],
         receiveOnlyCaps: [MediaKind: String], channels: ChannelRegistry, compiler: PipelineCompiler, playback: RemotePlayback,
         deliver: @escaping @Sendable (Int, Input) -> Void) throws(PeerError) {
        self.number = number
        self.pipeline = pipeline
        let webrtc: WebRTCBin
        do throws(GStreamerError) {
            webrtc = try WebRTCBin(name: "webrtc\(number)")
            try webrtc.set("bundle-policy", "max-bundle")
            try webrtc.set("latency", UInt(max(0, configuration.jitterBufferLatencyMs)))
            try webrtc.set("ice-transport-policy", configuration.iceTransportPolicy.rawValue)
            try Self.configureICE(webrtc, servers: configuration.iceServers)
            try Self.disableUPnP(webrtc)
            try SenderReportSync.configure(webrtc)
        } catch {
            throw .setup(error.description)
        }
        do throws(GStreamerError) {
            certificate = try configuration.dtlsKeyType.map { keyType throws(GStreamerError) in try DTLSCertificate.shared(keyType) }
        } catch {
            throw .setup("DTLS certificate: \(error)")
        }
        self.webrtc = webrtc
        let media = configuration.media
        var handlers: [SignalConnection] = []
        let nudge = configuration.nudgesConnectivityChecks ? connectivityNudge : nil
        do throws(GStreamerError) {
            handlers.append(try webrtc.connect("on-negotiation-needed") { _ in deliver(number, .negotiationNeeded) })
            handlers.append(try webrtc.connect("on-ice-candidate") { arguments in
                guard let mline = arguments[1].intValue ?? arguments[1].uintValue.map({ Int($0) }),
                      let candidate = arguments[2].stringValue else { return }
                nudge?.noteLocalCandidate(candidate)
                deliver(number, .localCandidate(mlineIndex: mline, candidate: candidate))
            })
            for property in ["signaling-state", "ice-connection-state", "ice-gathering-state", "connection-state"] {
                handlers.append(try webrtc.connect("notify::\(property)") { [weak webrtc] _ in
                    guard let webrtc else { return }
                    deliver(number, .statesChanged(WebRTCStates(webrtc)))
                })
            }
            let rtcpMinInterval = UInt64(max(0, configuration.rtcpMinInterval.nanoseconds))
            let pem = certificate?.pem
            let state = self.state
            let replay = configuration.replaysHandshake ? handshakeReplay : nil
            let arrivals = self.arrivals
            let retransmissions = self.retransmissions
            handlers.append(try webrtc.connect("deep-element-added") { [weak webrtc] arguments in
                guard case .object(let object?) = arguments[2], let element = object as? Element else { return }
                do throws(GStreamerError) {
                    switch element.factoryName {
                    case "nicesink", "nicesrc":
                        // max-bundle: one transport, so one nicesink and one nicesrc per webrtcbin.
                        let sending = element.factoryName == "nicesink"
                        let name = sending ? "sink" : "src"
                        guard let pad = element.staticPad(name) else { throw .padNotFound(element: element.name, pad: name) }
                        if sending, let agent = try element.get("agent").objectValue {
                            try Self.configureConnectivityChecks(agent)
                            if let nudge, let webrtc { Self.startNudging(nudge, sink: pad, webrtc: webrtc, agent: agent, arrivals: arrivals) }
                        }
                        if !sending {
                            // Everything the transport receives (RTP, RTCP, DTLS, SCTP) is a sign of life.
                            let probe = pad.addBufferProbe { _, _ in arrivals.add(); return .pass }
                            state.withLock { $0.arrivalProbes.append(probe) }
                        }
                        guard let replay else { break }
                        let probe = pad.addBufferProbe(readingData: true) { _, bytes in
                            guard let bytes else { return .pass }
                            return (sending ? replay.sent(bytes) : replay.received(bytes)) ? .pass : .remove
                        }
                        state.withLock { $0.handshakeProbes.append(probe) }
                        if sending { replay.start(sink: pad) }
                    case "rtpfunnel":
                        // It pushes its input's segment down the whole send path each time the
                        // input changes, nearly every packet with audio and video interleaved; the
                        // segments are the same, so only the first goes on.
                        guard let pad = element.staticPad("src") else { throw .padNotFound(element: element.name, pad: "src") }
                        let filter = pad.addRepeatedSegmentFilter()
                        state.withLock { $0.segmentFilters.append(filter) }
                    case "rtprtxsend":
                        // The far end's resend requests reach it upstream through its output.
                        guard let pad = element.staticPad("src") else { throw .padNotFound(element: element.name, pad: "src") }
                        let probe = pad.addRetransmissionRequestProbe { ssrc, seqnum in
                            retransmissions.admit(ssrc: ssrc, seqnum: seqnum) ? .pass : .drop
                        }
                        state.withLock { $0.retransmissionProbes.append(probe) }
                    case "dtlssrtpdec":
                        // Each transport's dtlssrtpdec is created (and added) while webrtcbin makes
                        // the transport, before it reads the certificate for the SDP fingerprint.
                        if let pem { try element.set("pem", pem) }
                    case "rtpsession":
                        // Reports are spaced by the RTCP allowance (`rtcp-fraction`, bits/s) and by
                        // `rtcp-min-interval`; `LossResponse` moves both while packets go missing.
                        try element.set("rtcp-min-interval", rtcpMinInterval)
                        try element.set("rtcp-fraction", LossResponse.calmRTCPBitsPerSecond)
                        // rtpsession holds a new SSRC's first packet until a second one in sequence
                        // comes (`probation`, 2), a guard against stray packets that SRTP already
                        // gives. The first resent packet of a call opens the far end's RTX stream,
                        // so it waited for the next resend, 40 ms on, usually past its frame's
                        // deadline: one 0.23 s freeze in every call that met loss (5 %, measured).
                        try element.set("probation", UInt(0))
                        state.withLock { $0.rtpSessions.append(element) }
                    case "rtpjitterbuffer":
                        // A jitter buffer holds a stream's first packet for its whole latency
                        // before it pushes anything (in case earlier ones come late); that wait
                        // was most of the time from connecting to the first picture. With a few
                        // packets in sequence the stream has evidently begun in order, so it
                        // starts then; later packets wait for gaps exactly as before.
                        try element.set("faststart-min-packets", Self.fastStartPackets)
                        // Resends are asked for gaps only, as libwebrtc does: by default the buffer
                        // also predicts when the next packet is due from the spacing so far, asks for
                        // it when it is late and gives it up as lost a latency later, with nothing
                        // after it missing. A sender that paces a big frame out slowly (Chromium at
                        // ~80 kbit/s after a blackhole) then had every frame's later packets given
                        // up before they came and dropped as too late: each frame broken, a key
                        // frame asked for, bigger and slower still, for as long as the call lasted.
                        try element.set("rtx-next-seqnum", false)
                        state.withLock {
                            $0.jitterBuffers.append(element)
                            $0.jitterBuffersUndecided.append(element)
                        }
                    default: break
                    }
                } catch {
                    deliver(number, .failure("cannot configure \(element.factoryName ?? "an element") of the transport: \(error)"))
                }
            })
            handlers.append(try webrtc.connect("on-data-channel") { arguments in
                guard case .object(let channel as DataChannel) = arguments[1] else { return }
                let reliable = channel.ordered && channel.maxRetransmits < 0 && channel.maxPacketLifetime < 0
                let (handle, adoptedAs) = channels.handleForRemote(label: channel.label, reliable: reliable)
                do throws(GStreamerError) {
                    try handle.bind(channel)
                    if let adoptedAs { deliver(number, .adoptedDataChannel(remoteLabel: channel.label, configuredLabel: adoptedAs)) }
                    deliver(number, .remoteDataChannel(handle))
                } catch {
                    deliver(number, .failure("cannot attach remote data channel '\(channel.label)': \(error)"))
                }
            })
            handlers.append(try webrtc.connect("pad-added") { arguments in
                guard case .object(let pad as Pad) = arguments[1], pad.direction == .source else { return }
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
                    state.withLock { state in
                        state.countingProbes.append(counted)
                        state.incomingTees.append(tee)
                        if let ssrc = stream.ssrc { state.incomingKinds[ssrc] = stream.kind }
                        if let requests { state.keyFrameRequestProbes.append(requests) }
                    }
                    deliver(number, .remoteStream(stream))
                } catch {
                    deliver(number, .failure(error.description))
                }
            })
            let recovery = media.parameters.lossRecovery
            // An answerer's media can land on transceivers webrtcbin makes for the offer's m-lines;
            // they ask for resends too (in an answer that only keeps what the offer had).
            handlers.append(try webrtc.connect("on-new-transceiver") { arguments in
                guard recovery.retransmission, case .object(let transceiver?) = arguments[1] else { return }
                do throws(GStreamerError) { try transceiver.set("do-nack", true) } catch {
                    deliver(number, .failure("cannot turn on retransmission: \(error)"))
                }
            })
            try pipeline.add(webrtc)
            // Video first, so m-line order is stable across rebuilds.
            var outputs: [PendingOutput] = []
            for (kind, tee) in outputTees.sorted(by: { $0.key == .video && $1.key == .audio }) {
                let teePad = try tee.requestPad("src_%u")
                state.withLock { $0.teePads.append((tee, teePad)) }
                let sinkPad = try webrtc.requestPad("sink_%u")
                if case .object(let transceiver?) = try sinkPad.get("transceiver") {
                    try LossRecoverySetup.configure(transceiver, kind: kind, recovery)
                    if kind == .video { state.withLock { $0.videoTransceivers.append(transceiver) } }
                }
                outputs.append(PendingOutput(kind: kind, tee: teePad, webrtc: sinkPad))
            }
            state.withLock { $0.pendingOutputs = outputs }
            for (kind, caps) in receiveOnlyCaps.sorted(by: { $0.key == .video && $1.key == .audio }) {
                if let transceiver = try webrtc.addTransceiver(direction: .recvonly, caps: Caps(caps)) {
                    try LossRecoverySetup.configure(transceiver, kind: kind, recovery)
                }
            }
        } catch {
            for handler in handlers { handler.cancel() }
            throw .setup(error.description)
        }
        state.withLock { $0.connections = handlers }
        InstanceCounter.increment("PeerSession")
    }

    deinit { InstanceCounter.decrement("PeerSession") }

    /// libnice 0.1.21 resends an unanswered connectivity check after max(500 ms, Ta × the pairs
    /// in play), doubling, up to `stun-max-retransmissions` times (7 by default); more tries keep a
    /// pair alive under heavy loss. `stun-initial-timeout` is libnice's first wait for TURN and
    /// STUN-server requests (checks do not use it): 100 ms instead of 200. `ConnectivityNudge` is
    /// what shortens the waits between checks. The agent is the transport's (read from its
    /// nicesink), before any check starts.
    static let discoveryInitialTimeoutMs: UInt = 100
    static let checkMaxRetransmissions: UInt = 9

    private static func configureConnectivityChecks(_ agent: Object) throws(GStreamerError) {
        try agent.set("stun-initial-timeout", discoveryInitialTimeoutMs)
        try agent.set("stun-max-retransmissions", checkMaxRetransmissions)
        try agent.set("stun-pacing-timer", checkPacingMs)
    }

    /// libnice spaces its connectivity checks by Ta (`stun-pacing-timer`), 20 ms by default, so a
    /// call on loopback spent about 65 ms between ICE checking and completed, half of
    /// AgentConnected → WebRtcConnected; at 5 ms, RFC 8445's floor for Ta, it takes 17–22 ms
    /// (`bench-call setup`, 20 calls, load 11–14: p50 111–117 ms against 164 ms).
    static let checkPacingMs: UInt = 5

    /// Nudges while the transport has received nothing (through `sink` once webrtcbin's ICE is
    /// through, through the candidates' sockets before), with the credentials of webrtcbin's
    /// descriptions and the agent's role.
    private static func startNudging(_ nudge: ConnectivityNudge, sink: Pad, webrtc: WebRTCBin, agent: Object, arrivals: ArrivalCount) {
        nudge.start(sink: sink, connected: { [weak webrtc] in
            guard let webrtc, let state = ICEConnectionState(nick: webrtc.iceConnectionState) else { return false }
            return state == .connected || state == .completed
        }, heardFarEnd: { arrivals.value > 0 }, descriptions: { [weak webrtc] in
            // An agent whose role cannot be read gives nothing: the nudge asks again next turn.
            let controlling = (try? agent.get("controlling-mode"))?.boolValue
            guard let webrtc, let local = webrtc.localDescription?.sdp, let remote = webrtc.remoteDescription?.sdp,
                  let controlling else { return nil }
            return ConnectivityNudge.Descriptions(local: local, remote: remote, controlling: controlling)
        })
    }

    /// Consecutive packets after which a jitter buffer starts its stream without waiting out its
    /// latency (`faststart-min-packets`): a video key frame is many packets, audio two 20 ms
    /// frames; a stream that begins out of order still gets the latency.
    static let fastStartPackets: UInt = 2

    private static func configureICE(_ webrtc: WebRTCBin, servers: [ICEServer]) throws(GStreamerError) {
        var stunSet = false
        for server in servers {
            for url in server.urls {
                if let stun = ICEServerURLs.stunServer(url) {
                    guard !stunSet else { continue }
                    try webrtc.set("stun-server", stun)
                    stunSet = true
                } else if ICEServerURLs.isTURN(url) {
                    try webrtc.addTurnServer(ICEServerURLs.turnURL(url, username: server.username, credential: server.credential))
                }
            }
        }
    }

    /// libnice asks the LAN's router for port mappings (UPnP) by default: per call an HTTP server,
    /// SSDP multicast and GUPnP state shared across calls that trips GLib's hash-table checks when
    /// dozens of calls start at once. A headless server behind STUN/TURN has no use for it.
    private static func disableUPnP(_ webrtc: WebRTCBin) throws(GStreamerError) {
        guard let ice = try webrtc.get("ice-agent").objectValue, ice.hasProperty("agent"),
              let agent = try ice.get("agent").objectValue, agent.hasProperty("upnp") else { return }
        try agent.set("upnp", false)
    }

    /// Compiles and attaches the receive fragment for a new webrtcbin src pad, behind an RTP tee
    /// (which never refuses data, so a recorder can come and go without disturbing playback).
    private static func attachIncoming(pad: Pad, session: Int, media: MediaConfiguration, compiler: PipelineCompiler,
                                       pipeline: Pipeline, send: SendMedia?) throws(PeerError) -> (RemoteStream, ReceiveMedia, Element) {
        guard let caps = pad.currentCaps ?? pad.allowedCaps, let structure = caps.structures.first,
              let kind = structure.string("media").flatMap(MediaKind.init(rawValue:)),
              let encoding = structure.string("encoding-name") else {
            throw .incoming("a stream with unusable caps on \(pad.name)")
        }
        let sink = kind == .video ? media.receiveVideo : media.receiveAudio
        let prefix = "rx\(session)_\(kind.rawValue)_\(pad.name.filter { $0.isNumber })"
        let fragment: PipelineFragment
        do throws(PipelineCompileError) {
            fragment = try compiler.compileReceive(kind: kind, encodingName: encoding, sink: sink, parameters: media.parameters,
                                                   idPrefix: prefix)
        } catch {
            throw .incoming("cannot receive \(encoding) \(kind.rawValue): \(error)")
        }
        let tee: Element
        let teeOutput: Pad
        do throws(GStreamerError) {
            tee = try Element(factory: "tee", name: prefix + "_rtp")
            try tee.set("allow-not-linked", true)
            try pipeline.add(tee)
            tee.syncStateWithParent()
            guard let teeInput = tee.staticPad("sink") else { throw .padNotFound(element: prefix + "_rtp", pad: "sink") }
            teeOutput = try tee.requestPad("src_%u")
            try pad.link(to: teeInput)
        } catch {
            throw .incoming("cannot tap \(kind.rawValue): \(error)")
        }
        let receiver: ReceiveMedia
        do throws(MediaRuntimeError) {
            receiver = try ReceiveMedia(fragment: fragment, into: pipeline, from: teeOutput, send: send)
        } catch {
            pipeline.stopAndRemove(tee)
            throw .incoming("cannot attach \(kind.rawValue): \(error)")
        }
        let stream = RemoteStream(kind: kind, encodingName: encoding, caps: caps.description, ssrc: structure.uint("ssrc"),
                                  sink: sink, appSink: receiver.appSink, recorderTee: receiver.recorderTee, rtpTee: tee)
        return (stream, receiver, tee)
    }

    /// Packets this session's transports have received so far, of any kind: RTP, RTCP, DTLS and
    /// SCTP. The liveness watch reads it instead of a stats sample: a far end that only receives
    /// (a recording bot) sends no media, but its receiver reports and the data channel's
    /// heartbeats still arrive, and reading a counter costs nothing next to webrtcbin's `get-stats`.
    var packetsArrived: UInt64 { arrivals.value }

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
    func localSignature(channels: ChannelRegistry) -> String {
        let pads = state.value.teePads.map { $0.pad.currentCaps?.mediaType ?? "none" }
        return (pads + channels.localConfigs.map(\.label)).joined(separator: "|")
    }

    /// Links the send graph's tees to webrtcbin. In a running pipeline this must wait until
    /// webrtcbin is up: a push into its inactive sink pads returns FLUSHING, which the tee passes
    /// upstream, and that stops the send graph's queues and live sources for good.
    func linkOutputs(except held: Set<MediaKind> = []) throws(PeerError) {
        let outputs = state.withLock { state in
            defer { state.pendingOutputs.removeAll { !held.contains($0.kind) } }
            return state.pendingOutputs.filter { !held.contains($0.kind) }
        }
        for output in outputs {
            do throws(GStreamerError) { try output.tee.link(to: output.webrtc) } catch { throw .setup(error.description) }
            let probe = Self.countPackets(crossing: output.tee, as: MediaDirection(kind: output.kind, sending: true), in: state)
            state.withLock { $0.countingProbes.append(probe) }
        }
    }

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

    /// Sets the share of FEC parity packets for the video we send (no effect without FEC).
    func setVideoFECPercentage(_ percent: Int) throws(GStreamerError) {
        for transceiver in state.value.videoTransceivers where transceiver.hasProperty("fec-percentage") {
            try transceiver.set("fec-percentage", UInt(min(100, max(0, percent))))
        }
    }

    /// The floor under the RTP session's report interval as it is set now (what `applyFeedback`
    /// moves); nil before webrtcbin made its session.
    var rtcpMinInterval: Duration? {
        guard let session = state.value.rtpSessions.first,
              // rtpsession always has the property; a failed read is reported as "not known".
              let value = try? session.get("rtcp-min-interval").uintValue else { return nil }
        return .nanoseconds(Int64(value))
    }

    /// Moves the RTCP allowance (and with it how soon a NACK or PLI can go out) and the jitter
    /// buffer's wait for resent packets; see `LossResponse`. (Whether the jitter buffers ask for
    /// resends at all is `askForResends(kinds:)`'s, which runs before this every tick.) Only what differs
    /// from `previous` is set: a key-frame hurry moves RTCP alone, and webrtcbin's `latency` (which
    /// walks rtpbin's sessions and jitter buffers under their locks) is left alone while a stream
    /// is being set up.
    func applyFeedback(_ feedback: LossResponse.Feedback, previous: LossResponse.Feedback) throws(GStreamerError) {
        let (sessions, buffers) = state.withLock { ($0.rtpSessions, $0.jitterBuffers) }
        if feedback.rtcpBitsPerSecond != previous.rtcpBitsPerSecond || feedback.rtcpMinInterval != previous.rtcpMinInterval {
            for session in sessions {
                try session.set("rtcp-fraction", feedback.rtcpBitsPerSecond)
                try session.set("rtcp-min-interval", UInt64(max(0, feedback.rtcpMinInterval.nanoseconds)))
            }
        }
        guard feedback.jitterBufferLatencyMs != previous.jitterBufferLatencyMs else { return }
        let latency = UInt(max(0, feedback.jitterBufferLatencyMs))
        try webrtc.set("latency", latency)
        for buffer in buffers where (try buffer.get("latency")).uintValue != latency { try buffer.set("latency", latency) }
    }

    /// Makes every incoming video stream's jitter buffer ask for resends (NACK) from the start,
    /// without waiting for the loss response, and every audio stream's not ask at all. webrtcbin
    /// 1.22 takes `do-retransmission` for all of them from the bundle's last m-line: from audio
    /// (no NACK) it left video without resends, and a far end that protects its video with FEC
    /// (Chromium's RED/ULPFEC) repairs the first losses so well that the loss count that wakes
    /// `LossResponse` may stay at zero while frames still go missing. Audio has no resends in
    /// WebRTC (Opus has its in-band FEC), so its requests only took RTCP's early slots from video:
    /// at 20 % loss the audio jitter buffer asked twice as often as the video one, and video
    /// requests waited for the next regular report or expired unsent (rtpsession's log). A jitter
    /// buffer's stream is its caps' SSRC, whose kind is in `kinds` (the SDP's and the pads'); one
    /// not known yet waits for the next call (every liveness tick).
    func askForResends(kinds: [UInt: MediaKind]) throws(GStreamerError) {
        let undecided = state.withLock { $0.jitterBuffersUndecided }
        guard !undecided.isEmpty else { return }
        var decided: [Element] = []
        for buffer in undecided {
            guard let ssrc = buffer.staticPad("sink")?.currentCaps?.structures.first?.uint("ssrc"), let kind = kinds[ssrc] else { continue }
            try buffer.set("do-retransmission", kind == .video)
            decided.append(buffer)
        }
        state.withLock { state in state.jitterBuffersUndecided.removeAll { buffer in decided.contains { $0 === buffer } } }
    }

    /// What the far end's transport-wide feedback says of the last 300 ms (rtpsession
    /// `twcc-stats`): nil until feedback arrived (the far end does not do TWCC, or not yet).
    var transportWideFeedback: TransportWideFeedback? {
        for session in state.value.rtpSessions where session.hasProperty("twcc-stats") {
            // An rtpsession that has seen no feedback yet holds no structure: the next one may.
            guard let stats = try? session.get("twcc-stats").structureValue,
                  let sent = stats.uint("packets-sent"), sent > 0 else { continue }
            return TransportWideFeedback(packetsSent: Int(sent), packetsReceived: Int(stats.uint("packets-recv") ?? 0),
                                         lossPercent: stats.double("packet-loss-pct") ?? 0,
                                         receivedBitsPerSecond: Int(stats.uint("bitrate-recv") ?? 0),
                                         sentBitsPerSecond: Int(stats.uint("bitrate-sent") ?? 0))
        }
        return nil
    }

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
        guard case .object(let transceiver?) = try pad.get("transceiver") else {
            throw .notSupported("webrtcbin's \(pad.name) has no transceiver")
        }
        try transceiver.set("codec-preferences", caps)
    }

    /// Adds a candidate the far end sent (the nudges before ICE is through go to it too).
    func addRemoteCandidate(mlineIndex: UInt, candidate: String) throws(GStreamerError) {
        try webrtc.addICECandidate(mlineIndex: mlineIndex, candidate: candidate)
        connectivityNudge.noteRemoteCandidate(candidate)
    }

    /// Takes the session out of the pipeline: signals off, send outputs unlinked from webrtcbin
    /// (so the tees keep the encoders running), incoming branches and webrtcbin removed.
    func tearDown() {
        let taken = state.withLock { state in defer { state = State() }; return state }
        for handler in taken.connections { handler.cancel() }
        handshakeReplay.stop()
        connectivityNudge.stop()
        for probe in taken.handshakeProbes + taken.countingProbes { probe.cancel() }
        for link in taken.teePads {
            if let peer = link.pad.peer { link.pad.unlink(from: peer) }
            link.tee.releaseRequestPad(link.pad)
        }
        // Downstream first, as GStreamer stops a pipeline: a receive branch's sink lets go of the
        // stream's thread when it stops, and the tee's input is then free to stop.
        for receiver in taken.receivers { receiver.elements.remove(from: pipeline) }
        for tee in taken.incomingTees { pipeline.stopAndRemove(tee) }
        // GStreamer 1.22: messages webrtcbin's internals post while it is removed and stopped
        // stay queued on the pipeline bus and keep transports alive, so drop them.
        pipeline.setBusFlushing(true)
        pipeline.remove(webrtc)
        webrtc.requestState(.null)
        pipeline.setBusFlushing(false)
    }
}

/// A count bumped on the transports' streaming threads and read by the liveness watch.
final class ArrivalCount: Sendable {
    private let count = Atomic<UInt64>(0)
    func add() { count.add(1, ordering: .relaxed) }
    var value: UInt64 { count.load(ordering: .relaxed) }
}
