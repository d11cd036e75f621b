import GLibCore
import GStreamer
import Synchronization
import Testing

@Suite struct MainLoopTests {
    init() { _ = TestRuntime.ready }

    @Test func workRunsOnTheLoopThread() async {
        let onLoop = await MainLoop.shared.run { MainLoop.shared.isCurrentThread }
        #expect(onLoop)
        #expect(!MainLoop.shared.isCurrentThread)
        #expect(await MainLoop.shared.run { 41 } + 1 == 42)
    }

    /// Checked once a timer due after both the cancelled one and a fourth tick has fired.
    @Test func cancelledTimerNeverFires() async throws {
        let fired = Counter()
        let timer = MainLoop.shared.schedule(after: .milliseconds(100)) { fired.increment() }
        timer.cancel()
        let repeating = Counter()
        let ticker = MainLoop.shared.schedule(every: .milliseconds(10)) {
            repeating.increment()
            return repeating.count < 3
        }
        let later = Counter()
        let witness = MainLoop.shared.schedule(after: .milliseconds(200)) { later.increment() }
        try await waitUntil("the later timer fires") { later.count == 1 }
        #expect(fired.count == 0)
        #expect(repeating.count == 3)
        ticker.cancel()
        witness.cancel()
    }
}
