/// A piece of graph that handles one incoming RTP stream, added to the running pipeline when
/// `webrtcbin` exposes the stream's src pad.
public struct PipelineFragment: Sendable, Hashable {
    public var kind: MediaKind
    public var encodingName: String
    public var nodes: [PipelineNode]
    public var links: [PipelineLink]
    /// Where to link webrtcbin's src pad (the depayloader's sink pad).
    public var entry: PadRef
    /// The fragment's last pad when it does not end in its own sink, else nil.
    public var exit: PadRef?
    /// Where `exit` must be linked in the send graph (the speaker mixer when AEC is on), else nil.
    public var exitTarget: PadRef?
    public var decisions: [String]

    public func node(_ id: String) -> PipelineNode? { nodes.first { $0.id == id } }

    /// gst-launch-1.0 text of the fragment alone (it starts at the depayloader).
    public var launchDescription: String {
        LaunchRenderer(nodes: nodes, links: links).render()
    }

    /// A runnable gst-launch-1.0 line: `feed` (text ending in an RTP payloader, e.g.
    /// `videotestsrc num-buffers=60 ! vp8enc ! rtpvp8pay`) linked into the fragment, with audio
    /// sinks replaced by clock-synced fakesinks, and an open `exit` or recorder tee ending in a fakesink.
    public func testRunLaunchDescription(feed: String) -> String {
        let recorderTees = nodes.filter { if case .recorderTee = $0.role { true } else { false } }.map { PadRef($0.id) }
        let rendered = TestRunVariant.apply(to: (nodes, links), openEnds: (exit.map { [$0] } ?? []) + recorderTees)
        return feed + " ! " + LaunchRenderer(nodes: rendered.0, links: rendered.1).render()
    }

    /// Graphviz text; the exit, if any, points at its target in the send graph.
    public var dot: String {
        let exits = zip([exit].compactMap { $0 }, [exitTarget].compactMap { $0 }).map { ($0, $1.node, "") }
        return DotRenderer(nodes: nodes, links: links, exits: exits).render(name: "receive_\(kind.rawValue)")
    }
}
