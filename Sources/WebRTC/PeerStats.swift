import Foundation
import GStreamer
import MediaPipeline

/// Reading a `get-stats` sample (`PeerStats`, in MediaPipeline) from webrtcbin's structure.
extension PeerStats {
    /// The raw structure, for fields we do not type.
    package var raw: Structure {
        // Only this extension's init makes a PeerStats (the memberwise init is the package's), always from a Structure.
        get { rawStructure as! Structure }
        set { rawStructure = newValue }
    }

    /// Structure names are GStreamer 1.22's (`outbound-rtp`, `inbound-rtp`, `remote-inbound-rtp`,
    /// `candidate-pair`, …). Its candidate stats label local and remote the wrong way round, so the
    /// pair's ids are followed rather than the candidates' own type names.
    init(raw: Structure, kinds: [UInt: MediaKind], timestamp: Double) {
        let entries = raw.fields.compactMap { $0.value.structureValue }
        func kind(_ entry: Structure) -> MediaKind? {
            entry.uint("ssrc").flatMap { kinds[$0] } ?? entry.string("kind").flatMap(MediaKind.init(rawValue:))
        }
        let remoteInbound = Dictionary(entries.filter { $0.name == "remote-inbound-rtp" }
            .compactMap { entry in entry.uint("ssrc").map { ($0, entry) } }, uniquingKeysWith: { first, _ in first })
        let outbound = entries.filter { $0.name == "outbound-rtp" }.compactMap { entry -> Outbound? in
            guard let ssrc = entry.uint("ssrc") else { return nil }
            let report = remoteInbound[ssrc]
            let lost = report?.int("packets-lost")
            return Outbound(kind: kind(entry), ssrc: ssrc,
                            bytesSent: UInt64(entry.uint("bytes-sent") ?? 0), packetsSent: UInt64(entry.uint("packets-sent") ?? 0),
                            roundTripTime: report?.double("round-trip-time"), remotePacketsLost: lost.flatMap { $0 < 0 ? nil : $0 },
                            remoteJitter: report?.double("jitter"), fractionLost: report?.double("fraction-lost"),
                            nackCount: UInt64(entry.uint("nack-count") ?? 0), pliCount: UInt64(entry.uint("pli-count") ?? 0))
        }
        let inbound = entries.filter { $0.name == "inbound-rtp" }.compactMap { entry -> Inbound? in
            guard let ssrc = entry.uint("ssrc") else { return nil }
            let lost = entry.int("packets-lost")
            return Inbound(kind: kind(entry), ssrc: ssrc,
                           bytesReceived: UInt64(entry.uint("bytes-received") ?? 0),
                           packetsReceived: UInt64(entry.uint("packets-received") ?? 0),
                           packetsLost: lost.flatMap { $0 < 0 ? nil : $0 }, jitter: entry.double("jitter"))
        }
        let candidates = Dictionary(entries.compactMap { entry in entry.string("id").map { ($0, entry) } },
                                    uniquingKeysWith: { first, _ in first })
        let candidatePair = entries.first(where: { $0.name == "candidate-pair" }).map { pair -> CandidatePair in
            let local = pair.string("local-candidate-id").flatMap { candidates[$0] }
            let remote = pair.string("remote-candidate-id").flatMap { candidates[$0] }
            return CandidatePair(
                localAddress: local?.string("address"), localPort: local?.int("port") ?? local?.uint("port").map { Int($0) },
                localType: local?.string("candidate-type"), remoteAddress: remote?.string("address"),
                remotePort: remote?.int("port") ?? remote?.uint("port").map { Int($0) },
                remoteType: remote?.string("candidate-type"), transport: local?.string("protocol"))
        }
        self.init(timestamp: timestamp, outbound: outbound, inbound: inbound, candidatePair: candidatePair,
                  dataChannelsOpened: entries.first { $0.name == "peer-connection" }
                      .flatMap { $0.int("data-channels-opened") ?? $0.uint("data-channels-opened").map { Int($0) } },
                  codecMimeTypes: Set(entries.filter { $0.name == "codec" }.compactMap { $0.string("mime-type") }), rawStructure: raw)
    }
}
