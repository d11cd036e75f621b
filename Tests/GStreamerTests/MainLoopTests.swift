import Testing
import Synchronization
import GStreamer
import GLibCore

@Suite struct MainLoopTests {
    init() { _ = TestRuntime.ready }

    @Test func workRunsOnTheLoopThread() async {
        let onLoop = await MainLoop.shared.run { MainLoop.shared.isCurrentThread }
        #expect(onLoop)
        #expect(!MainLoop.shared.isCurrentThread)
        #expect(await MainLoop.shared.run { 41 } + 1 == 42)
    }

    @Test func cancelledTimerNeverFires() async throws {
        let fired = Counter()
        let timer = MainLoop.shared.schedule(after: .milliseconds(100)) { fired.increment() }
        timer.cancel()
        let repeating = Counter()
        let ticker = MainLoop.shared.schedule(every: .milliseconds(10)) {
            repeating.increment()
            return repeating.count < 3
        }
        try await Task.sleep(for: .milliseconds(300))
        #expect(fired.count == 0)
        #expect(repeating.count == 3)
        ticker.cancel()
    }
}
