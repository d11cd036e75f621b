/// One sample of `get-stats`, typed, per direction and media kind.
///
/// GStreamer 1.22 reports wrong `kind`/`codec-id` for outbound streams under bundling and `-1`
/// for remote packets lost; kinds here come from our own SSRC map (read from pad caps) and `-1`
/// becomes nil instead of a bogus count.
public struct PeerStats: Sendable {
    public struct Outbound: Sendable {
        public var kind: MediaKind?
        public var ssrc: UInt
        public var bytesSent: UInt64
        public var packetsSent: UInt64
        /// From the receiver's reports (remote-inbound): nil until RTCP arrived.
        public var roundTripTime: Double?
        public var remotePacketsLost: Int?
        public var remoteJitter: Double?
        public var fractionLost: Double?
        /// Resend requests (NACK) and picture-loss indications the far end sent about this stream.
        public var nackCount: UInt64
        public var pliCount: UInt64

        package init(kind: MediaKind?, ssrc: UInt, bytesSent: UInt64, packetsSent: UInt64, roundTripTime: Double?,
                     remotePacketsLost: Int?, remoteJitter: Double?, fractionLost: Double?, nackCount: UInt64 = 0, pliCount: UInt64 = 0) {
            self.nackCount = nackCount
            self.pliCount = pliCount
            self.kind = kind
            self.ssrc = ssrc
            self.bytesSent = bytesSent
            self.packetsSent = packetsSent
            self.roundTripTime = roundTripTime
            self.remotePacketsLost = remotePacketsLost
            self.remoteJitter = remoteJitter
            self.fractionLost = fractionLost
        }
    }

    public struct Inbound: Sendable {
        public var kind: MediaKind?
        public var ssrc: UInt
        public var bytesReceived: UInt64
        public var packetsReceived: UInt64
        public var packetsLost: Int?
        public var jitter: Double?

        package init(kind: MediaKind?, ssrc: UInt, bytesReceived: UInt64, packetsReceived: UInt64, packetsLost: Int?, jitter: Double?) {
            self.kind = kind
            self.ssrc = ssrc
            self.bytesReceived = bytesReceived
            self.packetsReceived = packetsReceived
            self.packetsLost = packetsLost
            self.jitter = jitter
        }
    }

    public struct CandidatePair: Sendable {
        public var localAddress: String?
        public var localPort: Int?
        public var localType: String?
        public var remoteAddress: String?
        public var remotePort: Int?
        public var remoteType: String?
        public var transport: String?

        package init(localAddress: String?, localPort: Int?, localType: String?, remoteAddress: String?, remotePort: Int?,
                     remoteType: String?, transport: String?) {
            self.localAddress = localAddress
            self.localPort = localPort
            self.localType = localType
            self.remoteAddress = remoteAddress
            self.remotePort = remotePort
            self.remoteType = remoteType
            self.transport = transport
        }
    }

    /// When the sample was taken (monotonic seconds).
    public var timestamp: Double
    public var outbound: [Outbound]
    public var inbound: [Inbound]
    public var candidatePair: CandidatePair?
    public var dataChannelsOpened: Int?
    /// The MIME types of the negotiated codecs in use, e.g. ["audio/OPUS", "video/VP8"].
    public var codecMimeTypes: Set<String>
    /// What the offer/answer agreed on per kind (codec and payload type), e.g. video → VP8/97.
    public var negotiated: [MediaKind: NegotiatedCodec] = [:]
    /// The sender's bandwidth adaptation as last decided (nil when it is off or sends no video).
    public var bandwidth: BandwidthEstimator.Decision?
    /// The raw structure (GStreamer's, read as `raw` where WebRTC is imported), opaque here so
    /// that this module names no GStreamer type.
    package var rawStructure: any Sendable

    package init(timestamp: Double, outbound: [Outbound], inbound: [Inbound], candidatePair: CandidatePair?, dataChannelsOpened: Int?,
                 codecMimeTypes: Set<String>, negotiated: [MediaKind: NegotiatedCodec] = [:], rawStructure: any Sendable) {
        self.timestamp = timestamp
        self.outbound = outbound
        self.inbound = inbound
        self.candidatePair = candidatePair
        self.dataChannelsOpened = dataChannelsOpened
        self.codecMimeTypes = codecMimeTypes
        self.negotiated = negotiated
        self.rawStructure = rawStructure
    }

    public func outbound(_ kind: MediaKind) -> Outbound? { outbound.first { $0.kind == kind } }
    public func inbound(_ kind: MediaKind) -> Inbound? { inbound.first { $0.kind == kind } }
    public var bytesSent: UInt64 { outbound.reduce(0) { $0 + $1.bytesSent } }
    public var bytesReceived: UInt64 { inbound.reduce(0) { $0 + $1.bytesReceived } }
    public var roundTripTime: Double? { outbound.compactMap(\.roundTripTime).max() }

    /// Bits per second sent / received per kind between an earlier sample and this one.
    public func bitrates(since earlier: PeerStats) -> (sent: [MediaKind: Double], received: [MediaKind: Double]) {
        let seconds = timestamp - earlier.timestamp
        guard seconds > 0 else { return ([:], [:]) }
        var sent: [MediaKind: Double] = [:], received: [MediaKind: Double] = [:]
        for stream in outbound {
            guard let kind = stream.kind, let before = earlier.outbound.first(where: { $0.ssrc == stream.ssrc }) else { continue }
            sent[kind, default: 0] += Double(stream.bytesSent &- before.bytesSent) * 8 / seconds
        }
        for stream in inbound {
            guard let kind = stream.kind, let before = earlier.inbound.first(where: { $0.ssrc == stream.ssrc }) else { continue }
            received[kind, default: 0] += Double(stream.bytesReceived &- before.bytesReceived) * 8 / seconds
        }
        return (sent, received)
    }
}
