import GLibCore
import GStreamer
import Testing

/// `rtpfunnel` with two interleaved inputs, as webrtcbin bundles audio and video.
@Suite struct RepeatedSegmentFilterTests {
    init() { _ = TestRuntime.ready }

    /// Live sources, so the inputs take turns as a call's do: 1 s of 10 ms audio and 100 fps video
    /// (rtpfunnel ends at the first input's end).
    static let launch = "rtpfunnel name=f ! fakesink name=sink sync=false "
        + "audiotestsrc is-live=true num-buffers=100 samplesperbuffer=480 ! audio/x-raw,rate=48000,channels=1 ! rtpL16pay ! f. "
        + "videotestsrc is-live=true num-buffers=100 ! video/x-raw,width=64,height=48,framerate=100/1 ! rtpvrawpay ! f."

    /// Runs the pipeline to its end; returns the packets that reached the sink and the filter, if one was installed.
    func run(filtering: Bool) async throws -> (packets: Int, filter: RepeatedSegmentFilter?) {
        let pipeline = try Pipeline(launch: Self.launch)
        let funnelOutput = try #require(pipeline.element(named: "f")?.staticPad("src"))
        let filter = filtering ? funnelOutput.addRepeatedSegmentFilter() : nil
        let packets = Counter()
        let sink = try #require(pipeline.element(named: "sink")?.staticPad("sink"))
        let probe = sink.addBufferProbe { _, _ in packets.increment(); return .pass }
        try await pipeline.play()
        try await pipeline.waitForEndOfStream(timeout: .seconds(30))
        probe.cancel()
        filter?.probe.cancel()
        pipeline.stop()
        return (packets.count, filter)
    }

    @Test func onlyTheFirstOfTheInputsSameSegmentsGoesOn() async throws {
        let filtered = try await run(filtering: true)
        let filter = try #require(filtered.filter)
        #expect(filter.forwarded == 1)
        // Each change of input repeats the segment: about every packet, interleaved.
        #expect(filter.dropped >= 100, "kept back \(filter.dropped)")
        // Every packet still goes through (both runs stop at the first input's end, within a frame or two).
        let unfiltered = try await run(filtering: false)
        #expect(filtered.packets >= 250 && unfiltered.packets >= 250, "\(filtered.packets) and \(unfiltered.packets) packets")
        #expect(abs(filtered.packets - unfiltered.packets) <= 10, "\(filtered.packets) and \(unfiltered.packets) packets")
    }
}
