import ECV
import Foundation
import MediaPipeline
import MediaRuntime

/// The ConnectParameters flags shared by `ecv pipeline`, `ecv call` and `ecv agent`.
enum MediaOptions {
    static let spec = OptionSpec(values: ["codec", "width", "height", "fps", "bitrate", "audio-bitrate", "hw", "source", "audio-source",
                                          "earpiece", "turn", "turn-username", "turn-credential"],
                                 flags: ["codec-only", "audio-only", "no-audio-processing", "no-aec", "no-ns", "tracing", "no-speaker", "relay-only"])

    static let help = """
          --codec VP8|VP9|H264     preferred video codec (default VP8); the far end may pick
                                   another one both ends have; a list (H264,VP9) allows only those
          --codec-only             allow only the --codec codec: no common codec ends the call
          --width N --height N     video size (default 480x640, the seed's)
          --fps N                  frames per second (default 30)
          --bitrate KBPS           video max bitrate (default: by resolution)
          --audio-bitrate KBPS     Opus start bitrate (default: encoder's)
          --hw on|off              prefer a hardware encoder (default on)
          --audio-only             no video at all
          --no-audio-processing    no webrtcdsp (AEC, NS, AGC)
          --no-aec / --no-ns       disable echo cancellation / noise suppression only
          --no-speaker             play far-end audio on the second output (useSpeakerPhone=false)
          --earpiece SINK          that output, an audio sink chain: pulsesink device=NAME… (default autoaudiosink)
          --tracing                latency tracer and DOT dumps ($ECV_TRACE_DIR)
          --source NAME            video source: a preset name (smpte-live, ball, black, webcam…),
                                   camera:/dev/videoN, file:PATH (looped), or pattern:NAME
          --audio-source NAME      audio source: a preset name (tone-440, ticks, silence…), file:PATH
                                   (default: a 440 Hz tone; ecv agent: 660 Hz)
          --turn URL               a TURN server, turn:HOST:PORT[?transport=udp|tcp] (repeatable), with
          --turn-username U --turn-credential C   its credentials
          --relay-only             ICE through TURN relays only (needs a TURN server: --turn or the service's)
        """

    static func parameters(_ arguments: inout Arguments) throws(CLIError) -> ConnectParameters {
        var parameters = ConnectParameters()
        let codecs = arguments.value("codec")?.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) } ?? []
        if codecs.contains(where: \.isEmpty) { throw .usage("--codec takes a codec or a comma-separated list, e.g. H264 or H264,VP9") }
        if let preferred = codecs.first { parameters.videoCodec = preferred }
        if codecs.count > 1 { parameters.videoCodecs = codecs }
        if arguments.flag("codec-only") {
            guard let preferred = codecs.first else { throw .usage("--codec-only needs --codec, e.g. --codec H264 --codec-only") }
            parameters.videoCodecs = codecs.count > 1 ? codecs : [preferred]
        }
        if let width = try arguments.int("width") { parameters.videoWidth = width }
        if let height = try arguments.int("height") { parameters.videoHeight = height }
        if let fps = try arguments.int("fps") { parameters.videoFps = fps }
        if let bitrate = try arguments.int("bitrate") { parameters.videoMaxBitrate = bitrate }
        if let bitrate = try arguments.int("audio-bitrate") { parameters.audioStartBitrate = bitrate }
        if let hardware = arguments.value("hw") {
            switch hardware.lowercased() {
            case "on", "true", "yes": parameters.videoCodecHwAcceleration = true
            case "off", "false", "no": parameters.videoCodecHwAcceleration = false
            default: throw .usage("--hw takes on or off, not '\(hardware)'")
            }
        }
        if arguments.flag("audio-only") { parameters.videoCallEnabled = false }
        if arguments.flag("no-audio-processing") { parameters.noAudioProcessing = true }
        if arguments.flag("no-aec") { parameters.disableBuiltInAEC = true }
        if arguments.flag("no-ns") { parameters.disableBuiltInNS = true }
        if arguments.flag("no-speaker") { parameters.useSpeakerPhone = false }
        if let earpiece = arguments.value("earpiece") { parameters.earpieceSink = earpiece }
        let (turnUser, turnCredential) = (arguments.value("turn-username"), arguments.value("turn-credential"))
        for url in arguments.values("turn") {
            guard url.hasPrefix("turn:") || url.hasPrefix("turns:") else { throw .usage("--turn takes a turn: or turns: URL, not '\(url)'") }
            parameters.iceServers.append(ICEServer(urls: [url], username: turnUser, credential: turnCredential))
        }
        if arguments.flag("relay-only") { parameters.iceTransportPolicy = .relay }
        if arguments.flag("tracing") { parameters.tracing = true }
        return parameters
    }

    /// Compiles the send graph once before anything is dialed, so a size, rate, bitrate, codec or
    /// source the encoders cannot take is bad usage named by its option, not a failure mid-call.
    /// Returns the compiler's decisions (the encoder chosen and why, the bitrate), which `-v` logs.
    @discardableResult
    static func check(_ parameters: ConnectParameters, video: VideoSourceSpec, audio: AudioSourceSpec) throws(CLIError) -> [String] {
        do throws(PipelineCompileError) {
            return try PipelineCompiler(catalog: LiveCatalog.shared).compileSend(parameters: parameters.media, video: .single(video), audio: audio)
                .decisions
        } catch {
            throw optionError(error)
        }
    }

    /// The video codecs a call with `parameters` may end up sending and receiving (both ends use the
    /// one negotiated): the preferred one, then every other this machine can use, or only the
    /// allowlist's (`--codec A,B`, `--codec-only`). Empty for an audio-only call.
    static func negotiableCodecs(_ parameters: ConnectParameters) throws(CLIError) -> [String] {
        guard parameters.videoCallEnabled else { return [] }
        do throws(PipelineCompileError) {
            return try VideoCodecPreference.resolve(parameters.media, catalog: LiveCatalog.shared).codecs.map(\.rawValue)
        } catch {
            throw optionError(error)
        }
    }

    /// A compile error named by the option that set the value (`--bitrate`, not `videoMaxBitrate`).
    static func optionError(_ error: PipelineCompileError) -> CLIError {
        switch error {
        case .invalidBitrate(let parameter, let kbps, let allowed):
            .usage("--\(parameter == "audioStartBitrate" ? "audio-bitrate" : "bitrate") \(kbps) is out of range: "
                + "\(allowed.lowerBound)…\(allowed.upperBound) kbit/s, or 0 for the default")
        case .invalidFrameRate(let asked, let allowed):
            .usage("--fps \(asked) is out of range: \(allowed.lowerBound)…\(allowed.upperBound), or 0 for the default")
        case .invalidVideoSize(let width, let height, let reason): .usage("--width \(width) --height \(height): \(reason)")
        case .unknownVideoCodec, .videoCodecUnavailable: .usage("--codec: \(error)")
        case .unknownAudioCodec, .audioCodecUnavailable: .usage("audio codec: \(error)")
        case .invalidSource, .unknownPreset, .invalidPreset, .presetKindMismatch, .invalidName: .usage("--source/--audio-source: \(error)")
        case .missingElement, .noEncoderInstalled, .unsupportedReceive: .failed(error.description)
        }
    }

    static func presets(_ arguments: inout Arguments) throws(CLIError) -> PresetLibrary {
        guard let directory = arguments.path("presets") else { return .builtIn }
        do {
            return try PresetLibrary.loading(directory: URL(fileURLWithPath: directory))
        } catch {
            throw .failed("cannot load presets from \(directory): \(error)")
        }
    }

    static func video(_ arguments: inout Arguments, default fallback: VideoSourceSpec = .testPattern()) -> VideoSourceSpec {
        guard let text = arguments.value("source") else { return fallback }
        if text.hasPrefix("camera:") { return .camera(device: String(text.dropFirst(7))) }
        if text.hasPrefix("file:") { return .file(path: String(text.dropFirst(5)), loop: true) }
        if text.hasPrefix("pattern:") { return .testPattern(pattern: String(text.dropFirst(8))) }
        return .preset(name: text)
    }

    static func audio(_ arguments: inout Arguments, default fallback: AudioSourceSpec = .testTone()) -> AudioSourceSpec {
        guard let text = arguments.value("audio-source") else { return fallback }
        if text.hasPrefix("file:") { return .file(path: String(text.dropFirst(5)), loop: true) }
        if text == "silence" { return .silence }
        return .preset(name: text)
    }
}
