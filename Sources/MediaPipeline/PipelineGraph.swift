/// The compiled send side of a call: every element, property, link and caps, plus what the
/// runtime and the WebRTC layer need to drive it. Pure data: inspect it, diff it, render it.
public struct PipelineGraph: Sendable, Hashable {
    /// Elements in a deterministic order (sources first, each branch upstream to downstream).
    public var nodes: [PipelineNode]
    public var links: [PipelineLink]
    /// The RTP streams to link to `webrtcbin`, video first.
    public var outputs: [GraphOutput]
    /// Why each choice was made (encoder, bitrate, defaults applied), one line each.
    public var decisions: [String]
    /// How to change the video bitrate at runtime; nil for audio-only graphs.
    public var videoBitrate: BitrateControl?
    /// How to change the Opus bitrate at runtime.
    public var audioBitrate: BitrateControl?
    public var videoMute: MuteControl?
    public var audioMute: MuteControl?
    /// Present when both a front and a back video input were given.
    public var cameraSwitch: CameraSwitch?
    /// File inputs the runtime must loop with segment seeks.
    public var fileLoops: [FileLoop]
    /// The `audiomixer` far-end audio must be linked into (request a new sink pad per stream),
    /// present when echo cancellation is on: `webrtcdsp` refuses to start unless its
    /// `webrtcechoprobe` already exists, so the probe and the speaker live in this graph from the
    /// start and receive-side playback fragments join them later. Nil when AEC is off.
    public var speakerInput: PadRef?
    /// True when `MediaParameters.tracing` asked for it: the runtime enables the latency tracer.
    public var tracing: Bool

    /// The node with this id.
    public func node(_ id: String) -> PipelineNode? { nodes.first { $0.id == id } }

    /// Every node with this role, in graph order.
    public func nodes(withRole role: NodeRole) -> [PipelineNode] { nodes.filter { $0.role == role } }

    /// The output for a media kind.
    public func output(_ kind: MediaKind) -> GraphOutput? { outputs.first { $0.kind == kind } }

    /// gst-launch-1.0 text for the graph. Payloader outputs are left unlinked for webrtcbin.
    public var launchDescription: String { launchDescription(testRun: false) }

    /// gst-launch-1.0 text; with `testRun`, a variant that runs to completion on its own:
    /// live sources stop after `testRunBuffers` buffers, each output ends in a `fakesink`, and the
    /// speaker sink becomes a clock-synced `fakesink` so no sound device is needed.
    public func launchDescription(testRun: Bool) -> String {
        let rendered = testRun ? TestRunVariant.apply(to: (nodes, links), openEnds: outputs.map { PadRef($0.node, pad: $0.pad) })
                               : (nodes, links)
        return LaunchRenderer(nodes: rendered.0, links: rendered.1).render()
    }

    /// Graphviz text: one box per node with its properties, one edge per link, and a dashed
    /// edge from each output to webrtcbin labelled with its RTP caps.
    public var dot: String {
        DotRenderer(nodes: nodes, links: links,
                    exits: outputs.map { (PadRef($0.node, pad: $0.pad), "webrtcbin", $0.rtpCaps) }).render(name: "send")
    }

    /// How many buffers each live source produces in a test run.
    public static let testRunBuffers = 60
}
