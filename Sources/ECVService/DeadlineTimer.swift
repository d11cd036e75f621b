import GLibCore
import Synchronization

/// Runs the ACD's timed transitions (offer timeouts, wrap-up ends, queue entry, forgetting ended
/// calls) with one main-loop timer armed for the engine's `nextDeadline`: no polling. Every
/// operation on the engine is followed by `refresh()`, which re-arms the timer when the next
/// deadline moved. With a manual clock nothing is armed; the test ticks the engine itself.
final class DeadlineTimer: Sendable {
    private struct State {
        var engine: ACDEngine?
        var armedFor: Double?
        var timer: MainLoop.Timer?
        var stopped = false
    }

    private let state = Mutex(State())
    private let clock: any ACDClock
    private let isManual: Bool

    init(clock: any ACDClock, isManual: Bool) {
        self.clock = clock
        self.isManual = isManual
    }

    func attach(_ engine: ACDEngine) {
        state.withLock { $0.engine = engine }
    }

    /// Arms the timer for the engine's next deadline (or disarms it when there is none).
    func refresh() {
        guard !isManual else { return }
        state.withLock { state in
            guard !state.stopped, let engine = state.engine else { return }
            let next = engine.nextDeadline
            if next == state.armedFor, state.timer != nil { return }
            state.timer?.cancel()
            state.timer = nil
            state.armedFor = next
            guard let next else { return }
            // Rounded up to the next millisecond so the engine's clock has reached the deadline
            // when the timer fires; a timer that still fires early just re-arms.
            let seconds = max(0, next - clock.now())
            let delay = Duration.milliseconds(Int64((seconds * 1000).rounded(.up)) + 1)
            state.timer = MainLoop.shared.schedule(after: delay) { [weak self] in self?.fire() }
        }
    }

    private func fire() {
        let engine = state.withLock { state -> ACDEngine? in
            state.timer = nil
            state.armedFor = nil
            return state.stopped ? nil : state.engine
        }
        engine?.tick()
        refresh()
    }

    func stop() {
        state.withLock { state in
            state.stopped = true
            state.timer?.cancel()
            state.timer = nil
            state.engine = nil
        }
    }
}
