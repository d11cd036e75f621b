/// The video codecs a call offers and accepts, most preferred first.
///
/// WebRTC endpoints negotiate like this (RFC 3264, JSEP §5.3): an offer lists every codec the
/// offerer can send and receive, in its order of preference, and the answerer picks the first
/// one of the offer it can handle. `MediaParameters.videoCodec` (the seed's single codec) is the
/// preferred one; `MediaParameters.videoCodecs`, when set, is an allowlist: nothing outside it is
/// offered or accepted, so a call that must not fall back fails instead (`NO_COMMON_CODEC`).
public struct VideoCodecPreference: Sendable, Equatable, CustomStringConvertible {
    /// Most preferred first; never empty.
    public var codecs: [VideoCodec]
    /// True when `videoCodecs` limited the list (no fallback beyond it).
    public var restricted: Bool

    public var description: String { codecs.map(\.rawValue).joined(separator: ", ") }

    public init(codecs: [VideoCodec], restricted: Bool) {
        self.codecs = codecs
        self.restricted = restricted
    }

    /// The codec the send graph is compiled for before any negotiation: `videoCodec`, or the
    /// allowlist's first entry when the allowlist leaves `videoCodec` out.
    public static func preferred(_ parameters: MediaParameters) throws(PipelineCompileError) -> VideoCodec {
        let asked = try VideoCodec.parse(parameters.videoCodec)
        let allowed = try allowlist(parameters)
        guard let first = allowed.first, !allowed.contains(asked) else { return asked }
        return first
    }

    /// The allowlist `videoCodecs`, parsed, duplicates dropped; empty when none was given.
    public static func allowlist(_ parameters: MediaParameters) throws(PipelineCompileError) -> [VideoCodec] {
        var codecs: [VideoCodec] = []
        for name in parameters.videoCodecs {
            let codec = try VideoCodec.parse(name)
            if !codecs.contains(codec) { codecs.append(codec) }
        }
        return codecs
    }

    /// The codecs this machine can use for `parameters`: the preferred codec first, then the
    /// allowlist's order (or VP8, VP9, H.264), each kept only when `catalog` has an encoder, a
    /// payloader, a depayloader and a decoder for it. The preferred codec itself must be usable.
    public static func resolve(_ parameters: MediaParameters, catalog: any ElementCatalog) throws(PipelineCompileError) -> VideoCodecPreference {
        let preferred = try preferred(parameters)
        let allowed = try allowlist(parameters)
        let order = [preferred] + (allowed.isEmpty ? VideoCodec.allCases : allowed).filter { $0 != preferred }
        _ = try EncoderSelection.choose(codec: preferred, hardwareAllowed: parameters.videoCodecHwAcceleration, catalog: catalog)
        let usable = order.filter { codec in
            // A codec without an installed encoder is left out of what this end offers (the
            // preferred one's absence was reported just above).
            (try? EncoderSelection.choose(codec: codec, hardwareAllowed: parameters.videoCodecHwAcceleration, catalog: catalog)) != nil
                && catalog.contains(codec.payloader) && catalog.contains(codec.depayloader) && codec.decoders.contains(where: catalog.contains)
        }
        return VideoCodecPreference(codecs: usable.isEmpty ? [preferred] : usable, restricted: !allowed.isEmpty)
    }

    /// The payload type each codec is offered with: the preferred one at 96 (the number the send
    /// graph starts with), the next at 98 and so on, odd numbers left for their RTX.
    public func offeredPayloadType(_ codec: VideoCodec) -> Int {
        VideoCodec.payloadType + 2 * (codecs.firstIndex(of: codec) ?? 0)
    }

    /// The video transceiver's `codec-preferences` for an offer: one structure per codec, in
    /// preference order (webrtcbin writes them into the m-line in that order and adds RTX for each).
    public var offerCaps: String {
        codecs.map { codec in
            var caps = "application/x-rtp,media=video,encoding-name=\(codec.rawValue),payload=\(offeredPayloadType(codec)),clock-rate=\(VideoCodec.clockRate)"
            switch codec {
            case .h264: caps += ",packetization-mode=(string)1,profile-level-id=(string)42e01f,level-asymmetry-allowed=(string)1"
            case .vp9: caps += ",profile-id=(string)0"
            case .vp8: break
            }
            return caps
        }.joined(separator: ";")
    }
}

extension VideoCodec {
    /// The decoders the receive side can use, in the order it prefers them.
    var decoders: [String] {
        switch self {
        case .vp8: ["vp8dec"]
        case .vp9: ["vp9dec"]
        case .h264: ["avdec_h264", "openh264dec"]
        }
    }
}

/// An H.264 `profile-level-id` read by its meaning (RFC 6184 §8.1, profile_idc and the
/// constraint flags of profile-iop), not its spelling: `42e01f`, `42c01f` and `4d801f` are all
/// constrained baseline.
public enum H264Profile: String, Sendable, Equatable {
    case constrainedBaseline = "constrained baseline"
    case baseline
    case main
    case extended
    case high
    case constrainedHigh = "constrained high"

    /// The profile of a six-hex-digit `profile-level-id`; nil when it is malformed or a profile
    /// WebRTC does not use (High 10, 4:2:2, 4:4:4).
    public init?(profileLevelID: String) {
        let hex = Array(profileLevelID.utf8)
        guard hex.count == 6, let value = UInt32(profileLevelID, radix: 16) else { return nil }
        let idc = UInt8(value >> 16), iop = UInt8((value >> 8) & 0xff)
        switch idc {
        case 0x42: self = iop & 0x40 != 0 ? .constrainedBaseline : .baseline
        case 0x4d: self = iop & 0x80 != 0 ? .constrainedBaseline : .main
        case 0x58:
            switch iop & 0xc0 {
            case 0xc0: self = .constrainedBaseline
            case 0x80: self = .baseline
            default: self = .extended
            }
        case 0x64: self = iop & 0x0c == 0x0c ? .constrainedHigh : .high
        default: return nil
        }
    }

    /// Our encoders send constrained baseline, which a decoder of any of these profiles reads,
    /// and our decoders read each of them, so a format of one of them can carry both directions.
    /// Extended is the exception: its decoders need not take what constrained baseline leaves out.
    public var carriesOurStream: Bool { self != .extended }

    /// How well a format suits us: our own profile first, then the ones nearest to it.
    public var rank: Int {
        switch self {
        case .constrainedBaseline: 0
        case .baseline: 1
        case .main: 2
        case .constrainedHigh: 3
        case .high: 4
        case .extended: 5
        }
    }
}
