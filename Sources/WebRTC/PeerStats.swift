import Foundation
import GStreamer
import MediaPipeline

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
    }

    public struct Inbound: Sendable {
        public var kind: MediaKind?
        public var ssrc: UInt
        public var bytesReceived: UInt64
        public var packetsReceived: UInt64
        public var packetsLost: Int?
        public var jitter: Double?
    }

    public struct CandidatePair: Sendable {
        public var localAddress: String?
        public var localPort: Int?
        public var localType: String?
        public var remoteAddress: String?
        public var remotePort: Int?
        public var remoteType: String?
        public var transport: String?
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
    /// The raw structure, for fields we do not type.
    public var raw: Structure

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

    /// Structure names are GStreamer 1.22's (`outbound-rtp`, `inbound-rtp`, `remote-inbound-rtp`,
    /// `candidate-pair`, …). Its candidate stats label local and remote the wrong way round, so the
    /// pair's ids are followed rather than the candidates' own type names.
    init(raw: Structure, kinds: [UInt: MediaKind], timestamp: Double) {
        self.raw = raw
        self.timestamp = timestamp
        let entries = raw.fields.compactMap { $0.value.structureValue }
        func kind(_ entry: Structure) -> MediaKind? {
            entry.uint("ssrc").flatMap { kinds[$0] } ?? entry.string("kind").flatMap(MediaKind.init(rawValue:))
        }
        let remoteInbound = Dictionary(entries.filter { $0.name == "remote-inbound-rtp" }
            .compactMap { entry in entry.uint("ssrc").map { ($0, entry) } }, uniquingKeysWith: { first, _ in first })
        outbound = entries.filter { $0.name == "outbound-rtp" }.compactMap { entry in
            guard let ssrc = entry.uint("ssrc") else { return nil }
            let report = remoteInbound[ssrc]
            let lost = report?.int("packets-lost")
            return Outbound(kind: kind(entry), ssrc: ssrc,
                            bytesSent: UInt64(entry.uint("bytes-sent") ?? 0), packetsSent: UInt64(entry.uint("packets-sent") ?? 0),
                            roundTripTime: report?.double("round-trip-time"), remotePacketsLost: lost.flatMap { $0 < 0 ? nil : $0 },
                            remoteJitter: report?.double("jitter"), fractionLost: report?.double("fraction-lost"))
        }
        inbound = entries.filter { $0.name == "inbound-rtp" }.compactMap { entry in
            guard let ssrc = entry.uint("ssrc") else { return nil }
            let lost = entry.int("packets-lost")
            return Inbound(kind: kind(entry), ssrc: ssrc,
                           bytesReceived: UInt64(entry.uint("bytes-received") ?? 0),
                           packetsReceived: UInt64(entry.uint("packets-received") ?? 0),
                           packetsLost: lost.flatMap { $0 < 0 ? nil : $0 }, jitter: entry.double("jitter"))
        }
        let candidates = Dictionary(entries.compactMap { entry in entry.string("id").map { ($0, entry) } },
                                    uniquingKeysWith: { first, _ in first })
        if let pair = entries.first(where: { $0.name == "candidate-pair" }) {
            let local = pair.string("local-candidate-id").flatMap { candidates[$0] }
            let remote = pair.string("remote-candidate-id").flatMap { candidates[$0] }
            candidatePair = CandidatePair(
                localAddress: local?.string("address"), localPort: local?.int("port") ?? local?.uint("port").map { Int($0) },
                localType: local?.string("candidate-type"), remoteAddress: remote?.string("address"),
                remotePort: remote?.int("port") ?? remote?.uint("port").map { Int($0) },
                remoteType: remote?.string("candidate-type"), transport: local?.string("protocol"))
        }
        codecMimeTypes = Set(entries.filter { $0.name == "codec" }.compactMap { $0.string("mime-type") })
        dataChannelsOpened = entries.first { $0.name == "peer-connection" }.flatMap { $0.int("data-channels-opened") ?? $0.uint("data-channels-opened").map { Int($0) } }
    }
}
