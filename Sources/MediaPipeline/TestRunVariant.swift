/// Rewrites a graph so it runs to completion under plain `gst-launch-1.0`, without webrtcbin,
/// sound devices or an application: the check that a compiled graph really negotiates and flows.
/// Open ends (outputs, fragment exits, recorder tees) get a `fakesink` each, so EOS reaches a sink.
enum TestRunVariant {
    /// Live sources whose `num-buffers` (GstBaseSrc) ends the run with EOS.
    static let boundedSourceFactories: Set<String> = ["videotestsrc", "audiotestsrc", "v4l2src", "pulsesrc", "alsasrc"]
    /// Device sinks swapped for a clock-synced fakesink, so timing stays real but no device is needed.
    static let deviceSinkFactories: Set<String> = ["autoaudiosink", "pulsesink", "alsasink", "autovideosink"]

    static func apply(to graph: ([PipelineNode], [PipelineLink]), openEnds: [PadRef]) -> ([PipelineNode], [PipelineLink]) {
        var (nodes, links) = graph
        let linkedSinks = Set(links.map(\.to.node))
        for index in nodes.indices {
            if boundedSourceFactories.contains(nodes[index].factory), !linkedSinks.contains(nodes[index].id) {
                nodes[index].set("num-buffers", .int(PipelineGraph.testRunBuffers))
            }
            if nodes[index].factory == "appsink" {
                // Nobody pulls samples under gst-launch; without this appsink holds EOS until they are.
                nodes[index].set("wait-on-eos", .bool(false))
            }
            if deviceSinkFactories.contains(nodes[index].factory) {
                nodes[index] = PipelineNode(id: nodes[index].id, factory: "fakesink",
                                            properties: [NodeProperty("sync", .bool(true))], role: nodes[index].role)
            }
        }
        for end in openEnds {
            let sink = PipelineNode(id: end.node + "_testsink", factory: "fakesink")
            nodes.append(sink)
            // Rendered inline (`… ! rtpvp8pay … ! fakesink`) when the open end is the element's plain src pad.
            links.append(PipelineLink(from: PadRef(end.node, pad: end.pad == "src" ? nil : end.pad), to: PadRef(sink.id)))
        }
        return (nodes, links)
    }
}
