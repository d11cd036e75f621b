import GStreamer
import Testing

@Suite struct AppSourceSinkTests {
    init() { _ = TestRuntime.ready }

    @Test func framesRoundTripWithSizesAndTimestamps() async throws {
        let width = 320, height = 240, frames = 30
        let caps = try Caps("video/x-raw,format=RGBA,width=\(width),height=\(height),framerate=30/1")
        let pipeline = Pipeline()
        let source = try AppSource(name: "src", caps: caps, isLive: false)
        let convert = try Element(factory: "videoconvert")
        let sink = try AppSink(name: "sink", caps: try Caps("video/x-raw,format=I420"), maxBuffers: UInt(frames), drop: false)
        try pipeline.add([source, convert, sink])
        try source.link(to: convert)
        try convert.link(to: sink)
        let received = sink.samples(bufferingNewest: frames)
        let frameDuration: UInt64 = 1_000_000_000 / 30
        // A non-live source prerolls on its first buffer, so feed while the pipeline starts.
        let feeder = Task {
            for index in 0..<frames {
                let pixels = [UInt8](repeating: UInt8(index), count: width * height * 4)
                try source.push(pixels, pts: UInt64(index) * frameDuration, duration: frameDuration)
            }
            source.endOfStream()
        }
        try await pipeline.play()
        try await feeder.value
        try await pipeline.waitForEndOfStream() // bounded; the samples stream has ended by then
        var timestamps: [UInt64] = []
        for await sample in received {
            let frame = try #require(sample.videoFrame())
            #expect(frame.width == width)
            #expect(frame.height == height)
            #expect(frame.format == "I420")
            #expect(frame.data.count == width * height * 3 / 2)
            timestamps.append(frame.pts ?? .max)
        }
        pipeline.stop()
        #expect(timestamps == (0..<frames).map { UInt64($0) * frameDuration })
    }

    @Test func pushingAfterEndOfStreamThrows() async throws {
        let pipeline = Pipeline()
        let source = try AppSource(caps: try Caps("video/x-raw,format=RGBA,width=2,height=2,framerate=30/1"))
        let sink = try Element(factory: "fakesink")
        try pipeline.add([source, sink])
        try source.link(to: sink)
        // A live appsrc completes the change to PLAYING only when data arrives, so do not wait for it.
        pipeline.requestState(.playing)
        try source.push([UInt8](repeating: 0, count: 16), pts: 0, duration: nil)
        source.endOfStream()
        try await pipeline.waitForEndOfStream()
        #expect {
            try source.push([UInt8](repeating: 0, count: 16), pts: 0, duration: nil)
        } throws: { error in
            if case GStreamerError.flow(_, "eos") = error { true } else { false }
        }
        pipeline.stop()
    }
}

@Suite struct SampleRunningTimeTests {
    init() { _ = TestRuntime.ready }

    /// x264enc shifts its timestamps and its segment by 1000 hours (so no DTS is negative): the
    /// pts of its output is no clock time, its running time is, and that is what recordings place
    /// tracks by.
    @Test func runningTimeUndoesAnEncodersSegmentShift() async throws {
        let pipeline = try Pipeline(launch: """
            videotestsrc num-buffers=10 ! video/x-raw,width=64,height=64,framerate=30/1 ! \
            x264enc tune=zerolatency speed-preset=ultrafast ! appsink name=sink sync=false
            """)
        let sink = try AppSink(#require(pipeline.element(named: "sink")))
        let received = sink.samples(bufferingNewest: 10)
        try await pipeline.play()
        try await pipeline.waitForEndOfStream() // bounded; the samples stream has ended by then
        var samples: [Sample] = []
        for await sample in received { samples.append(sample) }
        pipeline.stop()
        #expect(samples.count == 10)
        let frameDuration: UInt64 = 1_000_000_000 / 30
        let thousandHours: UInt64 = 1000 * 3600 * 1_000_000_000
        for (index, sample) in samples.enumerated() {
            #expect((sample.pts ?? 0) >= thousandHours, "x264enc's pts carries its shift")
            let expected = UInt64(index) * frameDuration
            let running = try #require(sample.runningTime)
            #expect(running + 1_000_000 >= expected && running <= expected + 1_000_000, "frame \(index): running time \(running), expected \(expected)")
        }
    }
}
