extension PresetLibrary {
    /// The presets compiled into the SDK, identical to the files shipped in `pipelines/presets`
    /// (a test keeps them in sync), so the SDK works without that directory.
    public static let builtIn: PresetLibrary = {
        do {
            return try PresetLibrary(builtInFiles.map { entry throws(PipelineCompileError) in
                try Preset.parse(name: entry.name, text: entry.text)
            })
        } catch {
            preconditionFailure("built-in preset is invalid: \(error)")  // caught by PresetTests
        }
    }()

    /// (name, file text) of every built-in preset.
    public static let builtInFiles: [(name: String, text: String)] = [
        ("smpte-live", "# Live SMPTE colour bars: the headless default camera.\n# kind: video-source\nvideotestsrc is-live=true pattern=smpte\n"),
        ("ball", "# A moving ball on black, live: motion for encoder and latency tests.\n# kind: video-source\nvideotestsrc is-live=true pattern=ball\n"),
        ("black", "# Live black frames.\n# kind: video-source\nvideotestsrc is-live=true pattern=black\n"),
        ("webcam", "# The first V4L2 camera.\n# kind: video-source\nv4l2src device=/dev/video0\n"),
        ("tone-440", "# A live 440 Hz sine tone.\n# kind: audio-source\naudiotestsrc is-live=true wave=sine freq=440\n"),
        ("ticks", "# Live ticks once a second: easy to hear and to measure.\n# kind: audio-source\naudiotestsrc is-live=true wave=ticks\n"),
        ("silence", "# Live digital silence.\n# kind: audio-source\naudiotestsrc is-live=true wave=silence\n"),
        ("microphone", "# The default PulseAudio/PipeWire capture device.\n# kind: audio-source\npulsesrc\n"),
        ("speaker", "# The default audio output.\n# kind: audio-sink\nautoaudiosink\n"),
        ("window", "# A desktop video window (needs a display).\n# kind: video-sink\nautovideosink\n"),
        ("null-video", "# Drop decoded video in real time.\n# kind: video-sink\nfakesink sync=true\n"),
        ("null-audio", "# Drop decoded audio in real time.\n# kind: audio-sink\nfakesink sync=true\n"),
    ]
}
