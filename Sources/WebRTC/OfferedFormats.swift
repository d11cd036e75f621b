import MediaPipeline

/// Which of a remote offer's formats a stream we send can go out as.
///
/// Payload types belong to the offerer (libwebrtc numbers H.264 at 102 and up, aiortc VP8 at 97
/// and Opus at 96), so an answer uses the offer's number for our codec and its parameters.
/// webrtcbin 1.22 only matches an offered section to our transceiver when the payload types agree,
/// so the choice is applied before the offer is (see `PeerConnection.adaptSendFormats`).
enum OfferedFormats {
    static let transportWideCCURI = "http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01"

    /// The best format of `section` for our `encodingName` stream, or nil when none fits.
    static func choose(encodingName: String, in section: SDPMediaSection) -> SDPFormat? {
        let name = encodingName.uppercased()
        let candidates = section.formats.filter { $0.encodingName == name && $0.clockRate == clockRate(name) }
        switch name {
        case "H264":
            // Our payloader fragments (packetization-mode 1). An offer that leaves the mode out
            // (webrtcbin's own receive-only offers do) is taken only when nothing says 1.
            let nonInterleaved = candidates.filter { $0.parameters["packetization-mode"] == "1" }
            let unspecified = candidates.filter { $0.parameters["packetization-mode"] == nil }
            return (nonInterleaved.isEmpty ? unspecified : nonInterleaved).min { h264Rank($0) < h264Rank($1) }
        case "VP9":
            return candidates.first { ($0.parameters["profile-id"] ?? "0") == "0" }
        default:
            return candidates.first
        }
    }

    /// Our encoders send H.264 constrained baseline, which every profile's decoder reads; prefer
    /// the offer's own constrained-baseline entry, then baseline, main and high.
    static func h264Rank(_ format: SDPFormat) -> Int {
        let profile = (format.parameters["profile-level-id"] ?? "42e01f").lowercased()
        switch profile.prefix(4) {
        case "42e0": return 0
        case let prefix where prefix.hasPrefix("42"): return 1
        case let prefix where prefix.hasPrefix("4d"): return 2
        case let prefix where prefix.hasPrefix("64"): return 3
        default: return 4
        }
    }

    static func clockRate(_ encodingName: String) -> Int { encodingName == "OPUS" ? 48000 : 90000 }

    /// The transceiver's `codec-preferences` for sending `format` in `section`: what webrtcbin
    /// matches the offer against and writes into the answer (fmtp from string fields, the
    /// transport-wide-cc extension when offered).
    static func codecPreferences(for format: SDPFormat, kind: MediaKind, in section: SDPMediaSection) -> String {
        var caps = "application/x-rtp,media=\(kind.rawValue),encoding-name=\(format.encodingName),clock-rate=\(format.clockRate),payload=\(format.payloadType)"
        if format.encodingName == "H264" { caps += ",packetization-mode=(string)1" }
        if let id = section.extensions.first(where: { $0.value == transportWideCCURI })?.key {
            caps += ",extmap-\(id)=(string)\(transportWideCCURI)"
        }
        return caps
    }

    /// Why no format fits, naming our codec and what was offered.
    static func mismatch(encodingName: String, kind: MediaKind, in section: SDPMediaSection?) -> String {
        let offered = section.map { $0.formats.filter { !$0.encodingName.isEmpty }.map(\.description).joined(separator: ", ") } ?? "no \(kind.rawValue) section"
        return "the remote offer has no \(encodingName) format we can send for \(kind.rawValue) (offered: \(offered.isEmpty ? "none" : offered)); our \(kind.rawValue) is not sent"
    }
}

extension NegotiatedCodec {
    /// The first format of each audio/video section of an answer that is not rejected.
    static func from(answer: String) -> [MediaKind: NegotiatedCodec] {
        var codecs: [MediaKind: NegotiatedCodec] = [:]
        for section in SDPMediaSections.parse(answer) where !section.isRejected {
            guard let kind = section.kind, codecs[kind] == nil,
                  let format = section.formats.first(where: { !["RTX", "RED", "ULPFEC", "FLEXFEC-03", "CN", "TELEPHONE-EVENT"].contains($0.encodingName) && !$0.encodingName.isEmpty }) else { continue }
            codecs[kind] = NegotiatedCodec(kind: kind, encodingName: format.encodingName, payloadType: format.payloadType,
                                           clockRate: format.clockRate, parameters: format.parameters)
        }
        return codecs
    }
}
