import Testing
import Synchronization
import GStreamer
import GLibCore

@Suite struct PipelineTeardownTests {
    init() { _ = TestRuntime.ready }

    /// An appsink callback that drops the last reference to its own PLAYING pipeline: a NULL
    /// transition on that streaming thread would wait for the thread itself. The callback returns,
    /// and the pipeline still reaches NULL, within a bound.
    @Test func droppingARunningPipelineFromItsStreamingThreadDoesNotDeadlock() async throws {
        let holder = Locked<Pipeline?>(nil)
        let callbackReturned = OneShot<Bool, Never>()
        let sink = try await startHeldPipeline(in: holder) {
            dropLastReference(in: holder)
            callbackReturned.resolve(.success(!MainLoop.shared.isCurrentThread))
        }
        let bound = MainLoop.shared.schedule(after: .seconds(10)) { callbackReturned.resolve(.success(false)) }
        defer { bound.cancel() }
        let returnedOnStreamingThread = await callbackReturned.value()
        #expect(returnedOnStreamingThread, "the callback did not return within 10 s (or ran on the main loop)")
        #expect(holder.withLock { $0 == nil })
        let clock = ContinuousClock(), deadline = clock.now + .seconds(10)
        while sink.currentState != .null, clock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        #expect(sink.currentState == .null, "the dropped pipeline was not set to NULL within 10 s")
    }
}

/// Builds and plays a live pipeline whose only reference is `holder`'s; `onSample` runs on the
/// appsink's streaming thread for the first sample after that. Returns the appsink (which does not keep
/// the pipeline alive).
private func startHeldPipeline(in holder: Locked<Pipeline?>, onSample: @escaping @Sendable () -> Void) async throws -> AppSink {
    let pipeline = try Pipeline(launch: """
        videotestsrc is-live=true ! video/x-raw,width=64,height=48,framerate=30/1 ! queue ! appsink name=sink sync=false
        """)
    let sink = try AppSink(#require(pipeline.element(named: "sink")))
    let first = Atomic<Bool>(true)
    sink.setSampleHandler { _ in
        // Samples flow before `play` returns; the first one after the hand-over to `holder` drops it.
        if holder.value != nil, first.exchange(false, ordering: .relaxed) { onSample() }
    }
    try await pipeline.play()
    holder.withLock { $0 = pipeline }
    return sink
}

/// Takes the pipeline out of `holder` and releases it on this thread, outside the lock.
private func dropLastReference(in holder: Locked<Pipeline?>) {
    var last = holder.withLock { held -> Pipeline? in
        defer { held = nil }
        return held
    }
    #expect(last != nil)
    last = nil
}
