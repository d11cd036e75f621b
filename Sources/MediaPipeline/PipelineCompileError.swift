/// Why a graph could not be compiled. Every message names what was asked and what is available,
/// because the fix is nearly always "ask for something else" or "install a package".
public enum PipelineCompileError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A video codec name the SDK does not know.
    case unknownVideoCodec(asked: String, supported: [String])
    /// A real codec that GStreamer 1.22 cannot carry over WebRTC (AV1, H.265).
    case videoCodecUnavailable(asked: String, reason: String, supported: [String])
    /// An audio codec name the SDK does not know.
    case unknownAudioCodec(asked: String, supported: [String])
    /// A real codec GStreamer does not implement (iSAC).
    case audioCodecUnavailable(asked: String, reason: String, supported: [String])
    case invalidVideoSize(width: Int, height: Int, reason: String)
    case invalidFrameRate(asked: Int, allowed: ClosedRange<Int>)
    /// A bitrate parameter (in kbit/s) outside what the encoders accept.
    case invalidBitrate(parameter: String, kbps: Int, allowed: ClosedRange<Int>)
    /// An element the graph needs is not in the catalog.
    case missingElement(factory: String, package: String, purpose: String)
    /// No encoder for the codec is installed; `candidates` lists "factory (package)".
    case noEncoderInstalled(codec: String, candidates: [String])
    /// A source description that cannot work (empty device, unknown test pattern, …).
    case invalidSource(String)
    /// An element name chosen by the caller that gst-launch or the graph cannot use.
    case invalidName(String, reason: String)
    case unknownPreset(name: String, available: [String])
    case invalidPreset(name: String, reason: String)
    case presetKindMismatch(name: String, expected: PresetKind, actual: PresetKind)
    /// An incoming stream or sink combination the receive side cannot handle.
    case unsupportedReceive(kind: MediaKind, encodingName: String, reason: String)

    public var description: String {
        switch self {
        case .unknownVideoCodec(let asked, let supported):
            return "unknown video codec \"\(asked)\"; supported: \(supported.joined(separator: ", "))"
        case .videoCodecUnavailable(let asked, let reason, let supported):
            return "video codec \"\(asked)\" is not available: \(reason); supported: \(supported.joined(separator: ", "))"
        case .unknownAudioCodec(let asked, let supported):
            return "unknown audio codec \"\(asked)\"; supported: \(supported.joined(separator: ", "))"
        case .audioCodecUnavailable(let asked, let reason, let supported):
            return "audio codec \"\(asked)\" is not available: \(reason); supported: \(supported.joined(separator: ", "))"
        case .invalidVideoSize(let width, let height, let reason):
            return "video size \(width)x\(height) is invalid: \(reason)"
        case .invalidFrameRate(let asked, let allowed):
            return "videoFps \(asked) is out of range: use 0 (= \(MediaParameters.defaultVideoFps)) or \(allowed.lowerBound)…\(allowed.upperBound)"
        case .invalidBitrate(let parameter, let kbps, let allowed):
            return "\(parameter) \(kbps) kbit/s is out of range: use 0 (= default) or \(allowed.lowerBound)…\(allowed.upperBound) kbit/s"
        case .missingElement(let factory, let package, let purpose):
            return "GStreamer element \"\(factory)\" (needed for \(purpose)) is not installed; it comes with the Debian package \(package)"
        case .noEncoderInstalled(let codec, let candidates):
            return "no \(codec) encoder is installed; install one of: \(candidates.joined(separator: ", "))"
        case .invalidSource(let reason):
            return "invalid source: \(reason)"
        case .invalidName(let name, let reason):
            return "invalid element name \"\(name)\": \(reason)"
        case .unknownPreset(let name, let available):
            return "unknown preset \"\(name)\"; available: \(available.joined(separator: ", "))"
        case .invalidPreset(let name, let reason):
            return "invalid preset \"\(name)\": \(reason)"
        case .presetKindMismatch(let name, let expected, let actual):
            return "preset \"\(name)\" is a \(actual.rawValue) preset, but a \(expected.rawValue) preset is needed here"
        case .unsupportedReceive(let kind, let encodingName, let reason):
            return "cannot receive \(kind.rawValue) \"\(encodingName)\": \(reason)"
        }
    }
}
