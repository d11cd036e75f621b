/// Where outgoing video comes from.
public enum VideoSourceSpec: Sendable, Hashable {
    /// `videotestsrc`: the headless default. `live: true` paces frames by the clock like a camera;
    /// `live: false` produces frames as fast as downstream takes them (benchmarks).
    case testPattern(pattern: String = "smpte", live: Bool = true)
    /// `v4l2src device=…`, e.g. "/dev/video0".
    case camera(device: String)
    /// `filesrc ! decodebin ! clocksync`: a recorded file played in real time. With `loop`, the
    /// graph lists it in `fileLoops` and the runtime loops it with segment seeks.
    case file(path: String, loop: Bool)
    /// `appsrc name=<name>`: the application pushes timestamped raw frames. `caps` describes them;
    /// nil means I420 at the call's size and frame rate.
    case app(name: String, caps: String? = nil)
    /// A named preset from the `PresetLibrary` (kind `video-source`).
    case preset(name: String)
}

/// Where outgoing (microphone-side) audio comes from.
public enum AudioSourceSpec: Sendable, Hashable {
    /// `audiotestsrc is-live=true` with a waveform nick ("sine", "ticks", "pink-noise", …).
    case testTone(wave: String = "sine", frequency: Double = 440)
    /// A capture device: `pulsesrc device=…` when PulseAudio's plugin is installed, else
    /// `alsasrc device=…`. An empty name means the system default device.
    case device(String)
    /// `filesrc ! decodebin ! clocksync`, looped by the runtime like `VideoSourceSpec.file`.
    case file(path: String, loop: Bool)
    /// `appsrc name=<name>` fed by the application; nil caps = S16LE mono 48 kHz.
    case app(name: String, caps: String? = nil)
    /// Live digital silence (`audiotestsrc wave=silence`): a call without a microphone.
    case silence
    /// A named preset from the `PresetLibrary` (kind `audio-source`).
    case preset(name: String)
}

/// The video inputs of a call: one source, or front and back cameras behind an input-selector.
public struct VideoInputs: Sendable, Hashable {
    public var front: VideoSourceSpec
    public var back: VideoSourceSpec?
    /// Which camera is active at start.
    public var initial: CameraPosition

    public enum CameraPosition: String, Sendable, Hashable {
        case front
        case back
    }

    public init(front: VideoSourceSpec, back: VideoSourceSpec? = nil, initial: CameraPosition = .front) {
        self.front = front
        self.back = back
        self.initial = initial
    }

    /// One video source, registered as the "front" input (role `.videoSource("front")`, nodes
    /// named `video_…`); camera switching is then unavailable.
    public static func single(_ source: VideoSourceSpec) -> VideoInputs { VideoInputs(front: source) }

    /// Front and back cameras, switched by pad inside the graph (no renegotiation).
    public static func cameras(front: VideoSourceSpec, back: VideoSourceSpec, initial: CameraPosition = .front) -> VideoInputs {
        VideoInputs(front: front, back: back, initial: initial)
    }
}

/// What happens to one incoming RTP stream.
public enum ReceiveSinkSpec: Sendable, Hashable {
    /// Video decoded to raw frames for a Swift callback: `appsink name=<name>`.
    case renderer(name: String, format: RendererPixelFormat = .rgba)
    /// Audio decoded to S16LE mono 48 kHz samples for a Swift callback: `appsink name=<name>`.
    case audioSamples(name: String)
    /// Depayload and drop (`fakesink`), e.g. for an agent bot that ignores audio.
    case discard
    /// Depayload and parse but keep encoded, ending in `tee name=<name>` for a recorder to attach.
    case passthrough(name: String)
    /// Audio to the speaker (or a clock-synced fakesink when `useSpeakerPhone` is false).
    case playback
    /// Decode, then hand raw media to a sink preset from the `PresetLibrary`.
    case preset(name: String)
}

/// The raw format a video renderer's appsink delivers.
public enum RendererPixelFormat: String, Sendable, Hashable {
    /// One interleaved plane, 4 bytes a pixel: what image code and snapshots want. The default.
    case rgba = "RGBA"
    /// The decoder's native planar layout: no conversion cost, for analysis or re-encoding.
    case i420 = "I420"
}
