import Testing
import GStreamer

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
