@testable import MediaPipeline
import Testing

@Suite("Rendering")
struct RenderTests {
    @Test("property values render as gst-launch reads them")
    func propertyValues() {
        #expect(PropertyValue.bool(true).launchText == "true")
        #expect(PropertyValue.int(-6).launchText == "-6")
        #expect(PropertyValue.uint(1200).launchText == "1200")
        #expect(PropertyValue.double(0).launchText == "0.0")
        #expect(PropertyValue.double(-1).launchText == "-1.0")
        #expect(PropertyValue.double(440.5).launchText == "440.5")
        #expect(PropertyValue.string("/dev/video0").launchText == "/dev/video0")
        #expect(PropertyValue.string("").launchText == "\"\"")
        #expect(PropertyValue.string("a \"b\" c\\").launchText == "\"a \\\"b\\\" c\\\\\"")
        #expect(PropertyValue.enumNick("15-bit").launchText == "15-bit")
        #expect(PropertyValue.caps("video/x-raw,width=2").launchText == "\"video/x-raw,width=2\"")
        #expect(PropertyValue.fraction(numerator: 30, denominator: 1).launchText == "30/1")
        #expect(PropertyValue.structure("controls,video_bitrate=1").launchText == "\"controls,video_bitrate=1\"")
    }

    @Test("branches render with references: tee fan-out and selector fan-in")
    func branches() {
        let nodes = [PipelineNode(id: "a", factory: "videotestsrc"), PipelineNode(id: "t", factory: "tee"),
                     PipelineNode(id: "q1", factory: "queue"), PipelineNode(id: "q2", factory: "queue"),
                     PipelineNode(id: "sel", factory: "input-selector"), PipelineNode(id: "s", factory: "fakesink")]
        let links = [PipelineLink(from: PadRef("a"), to: PadRef("t")),
                     PipelineLink(from: PadRef("t"), to: PadRef("q1")), PipelineLink(from: PadRef("t"), to: PadRef("q2")),
                     PipelineLink(from: PadRef("q1"), to: PadRef("sel", pad: "sink_0")),
                     PipelineLink(from: PadRef("q2"), to: PadRef("sel", pad: "sink_1"), caps: "video/x-raw"),
                     PipelineLink(from: PadRef("sel"), to: PadRef("s"))]
        #expect(LaunchRenderer(nodes: nodes, links: links).render() ==
                "videotestsrc name=a ! tee name=t  t. ! queue name=q1 ! sel.sink_0  t. ! queue name=q2 ! \"video/x-raw\" ! sel.sink_1  input-selector name=sel ! fakesink name=s")
    }

    @Test("a link between two branching nodes renders on its own")
    func standaloneLink() {
        let nodes = [PipelineNode(id: "t", factory: "tee"), PipelineNode(id: "m", factory: "audiomixer"),
                     PipelineNode(id: "x", factory: "fakesink"), PipelineNode(id: "y", factory: "audiotestsrc")]
        let links = [PipelineLink(from: PadRef("t"), to: PadRef("m")), PipelineLink(from: PadRef("t"), to: PadRef("x")),
                     PipelineLink(from: PadRef("y"), to: PadRef("m"))]
        #expect(LaunchRenderer(nodes: nodes, links: links).render() ==
                "tee name=t  audiomixer name=m  t. ! fakesink name=x  audiotestsrc name=y ! m.  t. ! m.")
    }

    @Test("rendering is deterministic")
    func deterministic() throws {
        let first = try Fixtures.compile(video: .cameras(front: .testPattern(), back: .testPattern(pattern: "ball")))
        let second = try Fixtures.compile(video: .cameras(front: .testPattern(), back: .testPattern(pattern: "ball")))
        #expect(first == second)
        #expect(first.launchDescription == second.launchDescription)
        #expect(first.dot == second.dot)
    }

    @Test("the test-run variant bounds live sources and sinks every output")
    func testRunVariant() throws {
        let graph = try Fixtures.compile()
        let text = graph.launchDescription(testRun: true)
        #expect(text.contains("pattern=smpte num-buffers=60"))
        #expect(text.contains("rtpvp8pay name=video_pay pt=96 mtu=1200 picture-id-mode=15-bit ! fakesink name=video_pay_testsink"))
        #expect(text.contains("fakesink name=speaker_sink sync=true"))
        #expect(!text.contains("autoaudiosink"))
        #expect(!graph.launchDescription.contains("num-buffers"))
    }
}
