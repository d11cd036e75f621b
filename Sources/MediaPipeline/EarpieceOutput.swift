/// Where far-end audio plays when `useSpeakerPhone` is false: the second output, as the iOS SDK
/// plays to the earpiece instead of the loudspeaker. A Linux machine has no earpiece, so the
/// output is a sink chain the application names (`MediaParameters.earpieceSink`), in the preset
/// syntax: a device (`pulsesink device=<sink>`, `alsasink device=hw:1`), or any audio sink
/// chain (`audioconvert ! audio/x-raw,format=S16LE ! filesink location=far.raw`).
enum EarpieceOutput {
    /// Adds the earpiece chain, linked inside, and returns its first and last node. The first is
    /// named `prefix` and has the `speakerSink` role, so a device sink on a machine without audio
    /// output becomes a clock-synced `fakesink` like the speaker (`HeadlessAudio`).
    static func add(_ parameters: MediaParameters, prefix: String, into builder: inout GraphBuilder)
        throws(PipelineCompileError) -> (first: String, last: String) {
        let preset = try Preset.parse(name: "earpiece", text: "# kind: audio-sink\n" + parameters.earpieceSink)
        let last = try PresetExpansion.add(preset, prefix: prefix, firstRole: .speakerSink, into: &builder)
        return (prefix, last)
    }
}

extension MediaParameters {
    /// The earpiece output's default: the machine's default audio output (Linux has no earpiece).
    public static let defaultEarpieceSink = "autoaudiosink"
}
