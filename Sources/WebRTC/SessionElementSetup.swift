import GLibCore
import GStreamer

/// What a session does to one kind of element webrtcbin makes inside itself (announced by its
/// `deep-element-added` signal), and what it keeps of those elements afterwards.
///
/// Each kind is one small type that owns what it collects (probes, the elements it adjusts later),
/// so `PeerSession` only routes a new element to the set-up of its factory.
protocol SessionElementSetup: Sendable {
    /// The element factories this set-up handles.
    var factories: [String] { get }
    /// Configures an element of one of `factories`, on the thread webrtcbin made it on.
    func configure(_ element: Element) throws(GStreamerError)
    /// Lets go of what it collected: the session is being torn down.
    func release()
}

extension SessionElementSetup {
    func release() {}
}

/// The set-ups of one session, by factory name.
struct SessionElementSetups: Sendable {
    private let byFactory: [String: [any SessionElementSetup]]
    private let all: [any SessionElementSetup]

    init(_ setups: [any SessionElementSetup]) {
        all = setups
        var byFactory: [String: [any SessionElementSetup]] = [:]
        for setup in setups { for factory in setup.factories { byFactory[factory, default: []].append(setup) } }
        self.byFactory = byFactory
    }

    /// Configures `element` with each set-up that handles its factory, in the order given;
    /// others are left alone.
    func configure(_ element: Element) throws(GStreamerError) {
        guard let factory = element.factoryName, let setups = byFactory[factory] else { return }
        for setup in setups { try setup.configure(element) }
    }

    func release() { for setup in all { setup.release() } }
}

/// The bundle funnel (`rtpfunnel`) pushes its input's segment down the whole send path each time
/// the input changes, nearly every packet with audio and video interleaved; the segments are the
/// same, so only the first goes on.
final class SendSegmentSetup: SessionElementSetup {
    let factories = ["rtpfunnel"]
    private let filters = Locked<[RepeatedSegmentFilter]>([])

    /// The send path's segment filters (one funnel per transport).
    var segmentFilters: [RepeatedSegmentFilter] { filters.value }

    func configure(_ element: Element) throws(GStreamerError) {
        guard let pad = element.staticPad("src") else { throw .padNotFound(element: element.name, pad: "src") }
        let filter = pad.addRepeatedSegmentFilter()
        filters.withLock { $0.append(filter) }
    }

    func release() { filters.withLock { $0 = [] } }
}

/// The far end's transport-wide feedback, packet by packet: rtpsession pushes each message it
/// parses upstream toward the send path, through the bundle funnel's output, where `deliver`
/// gets it (on rtpsession's RTCP thread) for the rate control's queue-delay signal.
final class TransportFeedbackSetup: SessionElementSetup {
    let factories = ["rtpfunnel"]
    private let deliver: @Sendable ([TransportFeedbackPacket]) -> Void
    private let probes = Locked<[PadProbe]>([])

    init(deliver: @escaping @Sendable ([TransportFeedbackPacket]) -> Void) { self.deliver = deliver }

    func configure(_ element: Element) throws(GStreamerError) {
        guard let pad = element.staticPad("src") else { throw .padNotFound(element: element.name, pad: "src") }
        let probe = pad.addTransportFeedbackProbe(deliver)
        probes.withLock { $0.append(probe) }
    }

    func release() { probes.withLock { $0 = [] } }
}

/// The far end's resend requests reach `rtprtxsend` upstream through its output, where
/// `RetransmissionGate` decides which are answered.
final class RetransmissionRequestSetup: SessionElementSetup {
    let factories = ["rtprtxsend"]
    private let gate: RetransmissionGate
    private let probes = Locked<[PadProbe]>([])

    init(gate: RetransmissionGate) { self.gate = gate }

    func configure(_ element: Element) throws(GStreamerError) {
        guard let pad = element.staticPad("src") else { throw .padNotFound(element: element.name, pad: "src") }
        let gate = self.gate
        let probe = pad.addRetransmissionRequestProbe { ssrc, seqnum in gate.admit(ssrc: ssrc, seqnum: seqnum) ? .pass : .drop }
        probes.withLock { $0.append(probe) }
    }

    func release() { probes.withLock { $0 = [] } }
}

/// Each transport's `dtlssrtpdec` is created (and added) while webrtcbin makes the transport,
/// before it reads the certificate for the SDP fingerprint: the configured certificate goes in then.
struct CertificateSetup: SessionElementSetup {
    let factories = ["dtlssrtpdec"]
    let pem: String?

    func configure(_ element: Element) throws(GStreamerError) {
        if let pem { try element.set(DTLSDecoderProperty.pem, pem) }
    }
}
