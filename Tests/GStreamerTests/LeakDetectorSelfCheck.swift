import GStreamer
import Synchronization
import Testing

private let kept = Mutex<[Element]>([])

@Suite struct LeakDetectorSelfCheck {
    init() { _ = TestRuntime.ready }

    /// The detector itself must see a leak: keep one element per run alive on purpose.
    @Test func detectorReportsADeliberateLeak() async throws {
        let leaks = try await leakedObjects(repetitions: 2) {
            let element = try Element(factory: "identity")
            kept.withLock { $0.append(element) }
        }
        #expect(leaks["GstIdentity"] == 2, "detector saw: \(leaks)")
        kept.withLock { $0.removeAll() }
    }
}
