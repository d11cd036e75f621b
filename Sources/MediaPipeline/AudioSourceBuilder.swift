/// Adds the microphone-side audio input (source plus normalisation) to a graph.
struct AudioSourceBuilder {
    /// `audiotestsrc` wave nicks in GStreamer 1.22.
    static let waves: [String] = ["sine", "square", "saw", "triangle", "silence", "white-noise", "pink-noise", "sine-table",
                                  "ticks", "gaussian-noise", "red-noise", "blue-noise", "violet-noise"]

    /// The raw audio every capture path is normalised to: 48 kHz because Opus and webrtcdsp both
    /// run natively at it (no resampling inside either); mono because a call carries one voice
    /// and AEC cost scales with channels; S16LE interleaved because it is webrtcdsp's integer
    /// path and what opusenc and volume accept, so nothing converts between them.
    static let rawCaps = "audio/x-raw,format=S16LE,layout=interleaved,rate=48000,channels=1"

    /// Test sources emit 10 ms buffers (480 samples at 48 kHz), webrtcdsp's processing unit.
    static let samplesPerBuffer = 480

    var presets: PresetLibrary

    /// Adds source → audioconvert → audioresample → caps; returns the caps node and a loop.
    func add(_ spec: AudioSourceSpec, into builder: inout GraphBuilder) throws(PipelineCompileError) -> (last: String, loop: FileLoop?) {
        let prefix = "audio"
        var loop: FileLoop?
        let sourceEnd: String
        switch spec {
        case .testTone(let wave, let frequency):
            guard Self.waves.contains(wave) else {
                throw .invalidSource("unknown audiotestsrc wave \"\(wave)\"; available: \(Self.waves.joined(separator: ", "))")
            }
            guard frequency > 0, frequency < 24000 else {
                throw .invalidSource("test tone frequency \(frequency) Hz must be between 0 and 24000 (half of 48 kHz)")
            }
            sourceEnd = try builder.add("\(prefix)_src", "audiotestsrc", ["is-live": .bool(true), "wave": .enumNick(wave), "freq": .double(frequency),
                                                                        "samplesperbuffer": .int(Self.samplesPerBuffer)],
                                        role: .audioSource, purpose: "the test-tone audio source")
            builder.decide("audio input: audiotestsrc wave=\(wave) freq=\(frequency) (live)")
        case .silence:
            sourceEnd = try builder.add("\(prefix)_src", "audiotestsrc", ["is-live": .bool(true), "wave": .enumNick("silence"),
                                                                        "samplesperbuffer": .int(Self.samplesPerBuffer)],
                                        role: .audioSource, purpose: "the silent audio source")
            builder.decide("audio input: live silence")
        case .device(let device):
            let factory = builder.catalog.contains("pulsesrc") ? "pulsesrc" : "alsasrc"
            guard builder.catalog.contains(factory) else {
                throw .missingElement(factory: "pulsesrc", package: "gstreamer1.0-plugins-good (or alsasrc from gstreamer1.0-alsa)",
                                      purpose: "capturing from an audio device")
            }
            let properties: KeyValuePairs<String, PropertyValue> = device.isEmpty ? [:] : ["device": .string(device)]
            sourceEnd = try builder.add("\(prefix)_src", factory, properties, role: .audioSource, purpose: "the audio capture device")
            builder.decide("audio input: \(factory) " + (device.isEmpty ? "(default device)" : "device=\(device)")
                           + (factory == "alsasrc" ? " (pulsesrc is not installed)" : ""))
        case .file(let path, let shouldLoop):
            guard !path.isEmpty else { throw .invalidSource("audio file path is empty") }
            let file = try builder.add("\(prefix)_src", "filesrc", ["location": .string(path)], role: .audioSource, purpose: "the audio file source")
            let decoder = try builder.add("\(prefix)_decode", "decodebin", purpose: "decoding the audio file")
            sourceEnd = try builder.add("\(prefix)_sync", "clocksync", purpose: "playing the audio file in real time")
            builder.link(file, decoder)
            builder.link(decoder, sourceEnd, dynamicSourcePad: .audio)
            if shouldLoop { loop = FileLoop(kind: .audio, source: file, decoder: decoder, seekTarget: sourceEnd) }
            builder.decide("audio input: file \(path), paced by clocksync" + (shouldLoop ? ", looped by the runtime with segment seeks" : ", ends with EOS"))
        case .app(let name, let caps):
            let appCaps = caps ?? Self.rawCaps
            sourceEnd = try builder.add(name, "appsrc", ["format": .enumNick("time"), "is-live": .bool(true), "do-timestamp": .bool(false),
                                                         "caps": .caps(appCaps)], role: .audioSource, purpose: "the application audio source")
            builder.decide("audio input: appsrc \(name) (the application pushes timestamped \(appCaps) buffers)")
        case .preset(let name):
            let preset = try presets.preset(named: name, kind: .audioSource)
            sourceEnd = try PresetExpansion.add(preset, prefix: "\(prefix)_src", firstRole: .audioSource, into: &builder)
            builder.decide("audio input: preset \(name) (\(preset.launch))")
        }
        let convert = try builder.add("\(prefix)_convert", "audioconvert", purpose: "audio format conversion")
        let resample = try builder.add("\(prefix)_resample", "audioresample", purpose: "resampling audio to 48 kHz")
        let caps = try builder.addCaps("\(prefix)_caps", Self.rawCaps, role: .audioFormat)
        builder.chain([sourceEnd, convert, resample, caps])
        return (caps, loop)
    }
}
