import Foundation
import GStreamer
import Testing

@Suite struct LeakTests {
    init() { _ = TestRuntime.ready }

    @Test func pipelinesSignalsProbesAndSamplesLeaveNoObjectsBehind() async throws {
        let leaks = try await leakedObjects {
            let pipeline = try Pipeline(launch: "videotestsrc num-buffers=20 ! video/x-raw,width=64,height=48 ! identity name=tap signal-handoffs=true ! vp8enc deadline=1 ! appsink name=sink")
            let tap = try #require(pipeline.element(named: "tap"))
            let counter = Counter()
            let token = try tap.connect("handoff") { _ in counter.increment() }
            let sink = try AppSink(#require(pipeline.element(named: "sink")))
            let samples = sink.samples(bufferingNewest: 64)
            let probe = try #require(sink.staticPad("sink")).addBufferProbe { _, _ in .pass }
            try await pipeline.play()
            try await pipeline.waitForEndOfStream() // bounded; the samples stream has ended by then
            var received = 0
            for await sample in samples where sample.size > 0 { received += 1 }
            pipeline.stop()
            probe.cancel()
            token.cancel()
            #expect(received == 20)
        }
        #expect(leaks.isEmpty, "leaked: \(leaks)")
    }

    @Test func promisesAndWebRTCBinLeaveNoObjectsBehind() async throws {
        let leaks = try await leakedObjects {
            let webrtc = try Element(factory: "webrtcbin")
            webrtc.requestState(.ready)
            _ = try await webrtc.emitAwaitingReply("get-stats", .object(nil))
            webrtc.requestState(.null)
        }
        #expect(leaks.isEmpty, "leaked: \(leaks)")
    }

    /// A second tracking while one runs is refused (GStreamer 1.22's tracer would freeze the process).
    @Test func aSecondTrackingIsRefusedUntilTheFirstEnds() throws {
        var first = LeakTracer.startTracking()
        #expect(first != nil)
        #expect(LeakTracer.startTracking() == nil)
        first = nil
        let again = LeakTracer.startTracking()
        #expect(again != nil)
        _ = Pipeline(name: "created-while-tracking") // object creation still runs
        #expect(again?.survivors().isEmpty == true)
    }

    /// 1,000 create-run-destroy cycles: threads, descriptors and RSS stay flat.
    /// Bounds: threads +4 (GStreamer's thread pools keep a few idle workers), fds +4, RSS +16 MiB.
    @Test func thousandCyclesKeepResourcesFlat() async throws {
        func cycle() async throws {
            let pipeline = try Pipeline(launch: "fakesrc num-buffers=3 sizetype=fixed sizemax=64 ! queue ! fakesink")
            try await pipeline.play()
            try await pipeline.waitForEndOfStream()
            pipeline.stop()
        }
        for _ in 0..<50 { try await cycle() }
        try await settle()
        let threads = processThreadCount(), fds = openFileDescriptorCount(), rss = processResidentKilobytes()
        for _ in 0..<1000 { try await cycle() }
        try await settle()
        #expect(processThreadCount() <= threads + 4)
        #expect(openFileDescriptorCount() <= fds + 4)
        // Under `make sanitize` RSS measures ASan's quarantine of freed memory (256 MiB) and TSan's
        // shadow, not us: Tests/Sanitize/run.sh sets ECV_SANITIZER.
        if ProcessInfo.processInfo.environment["ECV_SANITIZER"] == nil {
            #expect(processResidentKilobytes() <= rss + 16 * 1024, "RSS grew from \(rss) kB to \(processResidentKilobytes()) kB")
        }
    }
}
