import MediaPipeline

/// Which of a remote offer's formats a stream we send can go out as.
///
/// Payload types belong to the offerer (libwebrtc numbers H.264 at 102 and up, aiortc VP8 at 97
/// and Opus at 96), so an answer uses the offer's number for our codec and its parameters.
/// webrtcbin 1.22 only matches an offered section to our transceiver when the payload types agree,
/// so the choice is applied before the offer is (see `PeerConnection.adaptSendFormats`).
enum OfferedFormats {
    static let transportWideCCURI = "http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01"

    /// The best format of `section` for our `encodingName` stream (Opus), or nil when none fits.
    static func choose(encodingName: String, in section: SDPMediaSection) -> SDPFormat? {
        let name = encodingName.uppercased()
        return section.formats.first { $0.encodingName == name && $0.clockRate == clockRate(name) }
    }

    /// The first codec of `section` (in its order: the offerer's preference, or the one an
    /// answer chose) that `preference` accepts, with the format to send it as.
    ///
    /// H.264 formats are judged by what `profile-level-id` means (`H264Profile`), not its
    /// spelling; our payloader fragments (packetization-mode 1), so a format without the mode
    /// (webrtcbin's own receive-only offers leave it out) is taken only when none says 1; among
    /// several, the profile nearest to our constrained baseline wins. VP9 must be profile 0.
    static func chooseVideo(in section: SDPMediaSection, from preference: VideoCodecPreference) -> (VideoCodec, SDPFormat)? {
        for format in section.formats where format.clockRate == VideoCodec.clockRate {
            guard let codec = VideoCodec(rawValue: format.encodingName), preference.codecs.contains(codec) else { continue }
            switch codec {
            case .vp8:
                return (codec, format)
            case .vp9:
                if (format.parameters["profile-id"] ?? "0") == "0" { return (codec, format) }
            case .h264:
                let usable = section.formats.filter { $0.encodingName == "H264" && $0.clockRate == VideoCodec.clockRate && h264Profile($0)?.carriesOurStream == true }
                let nonInterleaved = usable.filter { $0.parameters["packetization-mode"] == "1" }
                let unspecified = usable.filter { $0.parameters["packetization-mode"] == nil }
                let best = (nonInterleaved.isEmpty ? unspecified : nonInterleaved).min { h264Profile($0)!.rank < h264Profile($1)!.rank }
                if let best { return (codec, best) }
            }
        }
        return nil
    }

    /// An H.264 format's profile; RFC 6184's default (`420010`, baseline) when it names none.
    static func h264Profile(_ format: SDPFormat) -> H264Profile? {
        H264Profile(profileLevelID: format.parameters["profile-level-id"] ?? "420010")
    }

    /// The media codecs `section` lists (no RTX, FEC or comfort noise), for messages.
    static func codecNames(in section: SDPMediaSection?) -> [String] {
        var names: [String] = []
        for format in section?.formats ?? [] where !NegotiatedCodec.auxiliaryEncodings.contains(format.encodingName) && !format.encodingName.isEmpty {
            if !names.contains(format.encodingName) { names.append(format.encodingName) }
        }
        return names
    }

    static func clockRate(_ encodingName: String) -> Int { encodingName == "OPUS" ? 48000 : 90000 }

    /// The transceiver's `codec-preferences` for sending `format` in `section`: what webrtcbin
    /// matches the offer against and writes into the answer (fmtp from string fields, the
    /// transport-wide-cc extension when offered).
    static func codecPreferences(for format: SDPFormat, kind: MediaKind, in section: SDPMediaSection) -> String {
        var caps = "application/x-rtp,media=\(kind.rawValue),encoding-name=\(format.encodingName),clock-rate=\(format.clockRate),payload=\(format.payloadType)"
        if format.encodingName == "H264" { caps += ",packetization-mode=(string)1" }
        // RFC 7587: our decoder uses Opus's in-band FEC (opusdec `use-inband-fec`), so the far
        // end's encoder should send it; libwebrtc turns its Opus FEC on only when told so.
        if format.encodingName == "OPUS" { caps += ",useinbandfec=(string)1" }
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
    /// Encodings that travel beside a codec (resends, FEC, comfort noise, DTMF), never as one.
    static let auxiliaryEncodings: Set<String> = ["RTX", "RED", "ULPFEC", "FLEXFEC-03", "CN", "TELEPHONE-EVENT"]

    /// The first format of each audio/video section of an answer that is not rejected.
    static func from(answer: String) -> [MediaKind: NegotiatedCodec] {
        var codecs: [MediaKind: NegotiatedCodec] = [:]
        for section in SDPMediaSections.parse(answer) where !section.isRejected {
            guard let kind = section.kind, codecs[kind] == nil,
                  let format = section.formats.first(where: { !auxiliaryEncodings.contains($0.encodingName) && !$0.encodingName.isEmpty }) else { continue }
            codecs[kind] = NegotiatedCodec(kind: kind, encodingName: format.encodingName, payloadType: format.payloadType,
                                           clockRate: format.clockRate, parameters: format.parameters)
        }
        return codecs
    }
}
