import GLibCore
import GStreamer
import Testing

/// A patch probe changes the bytes that go on past its pad, and only those: a buffer another
/// branch shares (a tee in front) is copied first, so that branch sees the bytes as they were.
@Suite struct BufferPatchProbeTests {
    init() { _ = TestRuntime.ready }

    @Test func patchesGoOnAndSharedBuffersStayAsTheyWere() async throws {
        let pipeline = Pipeline()
        let caps = try Caps("application/x-test")
        let source = try AppSource(name: "src", caps: caps, isLive: false)
        let tee = try Element(factory: "tee")
        let (patchedQueue, plainQueue) = (try Element(factory: "queue"), try Element(factory: "queue"))
        let patched = try AppSink(name: "patched", maxBuffers: 8, drop: false)
        let plain = try AppSink(name: "plain", maxBuffers: 8, drop: false)
        try pipeline.add([source, tee, patchedQueue, plainQueue, patched, plain])
        try source.link(to: tee)
        try tee.link(to: patchedQueue)
        try tee.link(to: plainQueue)
        try patchedQueue.link(to: patched)
        try plainQueue.link(to: plain)
        let seen = Locked<[[UInt8]]>([])
        let probe = try #require(patchedQueue.staticPad("sink")).addBufferPatchProbe { bytes in
            seen.withLock { $0.append(Array(bytes)) }
            // The second byte becomes 0xEE in every buffer; a patch past the end is not written.
            return [BufferPatch(offset: 1, bytes: [0xEE]), BufferPatch(offset: bytes.count, bytes: [1])]
        }
        defer { probe.cancel() }
        let patchedSamples = patched.samples(bufferingNewest: 8)
        let plainSamples = plain.samples(bufferingNewest: 8)
        let feeder = Task {
            for index in 0..<3 { try source.push([UInt8(index), 0, 0, 9], pts: UInt64(index) * 1_000_000, duration: 1_000_000) }
            source.endOfStream()
        }
        try await pipeline.play()
        try await feeder.value
        try await pipeline.waitForEndOfStream()
        pipeline.stop()
        var patchedBytes: [[UInt8]] = [], plainBytes: [[UInt8]] = []
        for await sample in patchedSamples { patchedBytes.append(sample.bytes) }
        for await sample in plainSamples { plainBytes.append(sample.bytes) }
        #expect(patchedBytes == [[0, 0xEE, 0, 9], [1, 0xEE, 0, 9], [2, 0xEE, 0, 9]])
        #expect(plainBytes == [[0, 0, 0, 9], [1, 0, 0, 9], [2, 0, 0, 9]])
        #expect(seen.value == plainBytes)
    }
}
