import GLibCore
import GStreamer

/// The transport's libnice ends (`nicesink`, `nicesrc`; max-bundle: one of each per webrtcbin):
/// what it receives counts as a sign of life and is watched for the far end's close
/// (`FarEndCloseWatch`), its DTLS handshake is replayed when a flight is lost, and its ICE agent
/// checks connectivity sooner and harder than libnice's defaults.
final class TransportSetup: SessionElementSetup {
    let factories = ["nicesink", "nicesrc"]
    private weak let webrtc: WebRTCBin?
    private let arrivals: ArrivalCount
    private let replay: HandshakeReplay?
    private let nudge: ConnectivityNudge?
    private let farEndClosed: @Sendable (String) -> Void
    private struct Probes {
        var arrivals: [PadProbe] = []
        var farEndClose: [PadProbe] = []
        /// The probes that show `replay` the transport's datagrams, both ways.
        var handshake: [PadProbe] = []
    }
    private let probes = Locked(Probes())

    /// `replay` and `nudge` nil: the configuration turned them off.
    init(webrtc: WebRTCBin, arrivals: ArrivalCount, replay: HandshakeReplay?, nudge: ConnectivityNudge?,
         farEndClosed: @escaping @Sendable (String) -> Void) {
        self.webrtc = webrtc
        self.farEndClosed = farEndClosed
        self.arrivals = arrivals
        self.replay = replay
        self.nudge = nudge
    }

    func configure(_ element: Element) throws(GStreamerError) {
        let sending = element.factoryName == "nicesink"
        let name = sending ? "sink" : "src"
        guard let pad = element.staticPad(name) else { throw .padNotFound(element: element.name, pad: name) }
        if sending, let agent = try element.get(Self.agent) {
            try Self.configureConnectivityChecks(agent)
            if let nudge, let webrtc { Self.startNudging(nudge, sink: pad, webrtc: webrtc, agent: agent, arrivals: arrivals) }
        }
        if !sending {
            // Everything the transport receives (RTP, RTCP, DTLS, SCTP) is a sign of life.
            let arrivals = self.arrivals
            let probe = pad.addBufferProbe { _, _ in arrivals.add(); return .pass }
            let closeProbe = FarEndCloseWatch.attach(to: pad, onClose: farEndClosed)
            probes.withLock { $0.arrivals.append(probe); $0.farEndClose.append(closeProbe) }
        }
        guard let replay else { return }
        let probe = pad.addBufferProbe(readingData: true) { _, bytes in
            guard let bytes else { return .pass }
            return (sending ? replay.sent(bytes) : replay.received(bytes)) ? .pass : .remove
        }
        probes.withLock { $0.handshake.append(probe) }
        if sending { replay.start(sink: pad) }
    }

    func release() {
        let taken = probes.withLock { probes in defer { probes = Probes() }; return probes }
        for probe in taken.handshake + taken.farEndClose { probe.cancel() }
    }

    /// libnice 0.1.21 resends an unanswered connectivity check after max(500 ms, Ta × the pairs
    /// in play), doubling, up to `stun-max-retransmissions` times (7 by default); more tries keep a
    /// pair alive under heavy loss. `stun-initial-timeout` is libnice's first wait for TURN and
    /// STUN-server requests (checks do not use it): 25 ms instead of 200. With the 9 tries a
    /// STUN server that never answers (`ecv agent`'s default `stun:127.0.0.1:3478` with nothing
    /// there) is given up after 8 s instead of 32 s at 100 ms, and for all that time libnice's
    /// discovery timer wakes every Ta (5 ms): 196 times a second per call, about a quarter of a
    /// receive-only call's CPU while it lasts (`bench-call cost`). An answering server ends it at
    /// its first answer. `ConnectivityNudge` is what shortens the waits between checks. The
    /// agent is the transport's (read from its nicesink), before any check starts.
    static let discoveryInitialTimeoutMs: UInt = 25
    static let checkMaxRetransmissions: UInt = 9

    /// libnice spaces its connectivity checks by Ta (`stun-pacing-timer`), 20 ms by default, so a
    /// call on loopback spent about 65 ms between ICE checking and completed, half of
    /// AgentConnected → WebRtcConnected; at 5 ms, RFC 8445's floor for Ta, it takes 17–22 ms
    /// (`bench-call setup`, 20 calls, load 11–14: p50 111–117 ms against 164 ms).
    static let checkPacingMs: UInt = 5

    /// nicesink's libnice agent.
    private static let agent = PropertyKey<Object>("agent")

    private static func configureConnectivityChecks(_ agent: Object) throws(GStreamerError) {
        try agent.set(NiceAgentProperty.stunInitialTimeout, discoveryInitialTimeoutMs)
        try agent.set(NiceAgentProperty.stunMaxRetransmissions, checkMaxRetransmissions)
        try agent.set(NiceAgentProperty.stunPacingTimer, checkPacingMs)
    }

    /// Nudges while the transport has received nothing (through `sink` once webrtcbin's ICE is
    /// through, through the candidates' sockets before), with the credentials of webrtcbin's
    /// descriptions and the agent's role.
    private static func startNudging(_ nudge: ConnectivityNudge, sink: Pad, webrtc: WebRTCBin, agent: Object, arrivals: ArrivalCount) {
        nudge.start(sink: sink, connected: { [weak webrtc] in
            guard let webrtc else { return false }
            let state = webrtc.iceConnectionState
            return state == .connected || state == .completed
        }, heardFarEnd: { arrivals.value > 0 }, descriptions: { [weak webrtc] in
            // An agent whose role cannot be read gives nothing: the nudge asks again next turn.
            let controlling = try? agent.get(NiceAgentProperty.controllingMode)
            guard let webrtc, let local = webrtc.localDescription?.sdp, let remote = webrtc.remoteDescription?.sdp,
                  let controlling else { return nil }
            return ConnectivityNudge.Descriptions(local: local, remote: remote, controlling: controlling)
        })
    }
}
