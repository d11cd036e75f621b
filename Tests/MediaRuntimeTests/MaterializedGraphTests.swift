import GStreamer
import MediaPipeline
import MediaRuntime
import MediaTestSupport
import Testing

@Suite struct MaterializedGraphTests {
    init() throws { try GStreamerRuntime.ensureInitialized() }

    /// A decodebin pad that cannot be linked leaves no silent hole: the failed link is the first
    /// ERROR on the pipeline's bus, from the decodebin, before any data finds the pad unlinked.
    /// The source's not-linked flow error follows it; the run's outcome is still the first error,
    /// also when both were dispatched before anyone waited (a busy main loop once made the wait
    /// report the source's error).
    @Test func aDynamicPadThatCannotBeLinkedIsAnErrorOnTheBus() async throws {
        let pipeline = Pipeline(name: "dynamic-link")
        let nodes = [
            PipelineNode(id: "src", factory: "audiotestsrc", properties: [NodeProperty("num-buffers", .int(5))]),
            PipelineNode(id: "dec", factory: "decodebin"),
            PipelineNode(id: "sink", factory: "fakesink"),
        ]
        let links = [
            PipelineLink(from: PadRef("src"), to: PadRef("dec")),
            // Audio comes out of the decodebin; the filter lets only video through.
            PipelineLink(from: PadRef("dec"), to: PadRef("sink"), caps: "video/x-raw", dynamicSourcePad: .audio),
        ]
        let graph = try MaterializedGraph(nodes: nodes, links: links, into: pipeline)
        defer {
            pipeline.stop()
            graph.remove(from: pipeline)
        }
        _ = pipeline.requestState(.playing)
        try await eventually(.seconds(10), "the source's not-linked error after the failed link") {
            pipeline.lastError?.source.hasSuffix(":src") ?? false
        }
        let error = await #expect(throws: GStreamerError.self) { try await pipeline.waitForEndOfStream(timeout: .seconds(10)) }
        guard case .flow(let element, let result)? = error else {
            Issue.record("expected the bus error, got \(String(describing: error))")
            return
        }
        #expect(element.hasSuffix(":dec"), "from \(element)")
        #expect(result.contains("cannot link element 'dec'") && result.contains("no common format with video/x-raw"), "\(result)")
    }
}
