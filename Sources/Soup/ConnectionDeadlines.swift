internal import GLibCore

/// Every connection's header and body deadline on one main-loop timer.
///
/// A GSource per connection made each main-loop iteration walk thousands of timers (GLib prepares
/// and checks every source of the context on every iteration), and when a crowd of idle
/// connections ran out together, all of them were cut in one iteration while a health check
/// waited behind it (Benchmarks/connections). Here deadlines wait in a heap (cancelled ones are
/// dropped lazily when they surface), one timer is armed for the earliest, and at most
/// `batchSize` connections are cut per iteration: the loop serves others between batches.
@MainLoopActor
final class ConnectionDeadlines {
    struct Token: Hashable { fileprivate let id: Int }

    private struct Entry: Comparable {
        let due: ContinuousClock.Instant
        let id: Int
        static func < (lhs: Entry, rhs: Entry) -> Bool { (lhs.due, lhs.id) < (rhs.due, rhs.id) }
    }

    /// Connections cut per batch at most, and the pause between batches: a crowd that runs out
    /// together is cut over a while, so its reconnecting (an attacker opens a new connection for
    /// each one cut) does not arrive as one flood either.
    let batchSize: Int
    let pause: Duration
    private var heap = MinHeap<Entry>()
    private var actions: [Int: () -> Void] = [:]
    private var nextId = 0
    private var timer: MainLoop.Timer?
    private var armedFor: ContinuousClock.Instant?

    nonisolated init(batchSize: Int = 16, pause: Duration = .milliseconds(10)) {
        self.batchSize = batchSize
        self.pause = pause
    }

    /// Live deadlines (for tests).
    var count: Int { actions.count }

    /// Runs `action` on the main loop once `delay` has passed, unless cancelled first.
    func schedule(after delay: Duration, _ action: @escaping () -> Void) -> Token {
        nextId += 1
        let entry = Entry(due: .now + delay, id: nextId)
        actions[entry.id] = action
        heap.insert(entry)
        // Cancelled entries are left in the heap until they surface; compact when they dominate.
        if heap.count > 2 * actions.count + 1024 { heap.filter { actions[$0.id] != nil } }
        if armedFor.map({ entry.due < $0 }) ?? true { arm(for: entry.due) }
        return Token(id: entry.id)
    }

    func cancel(_ token: Token) {
        actions[token.id] = nil
    }

    /// Forgets every deadline (the server stopped).
    func stop() {
        timer?.cancel()
        timer = nil
        armedFor = nil
        actions = [:]
        heap.removeAll()
    }

    private func arm(for due: ContinuousClock.Instant) {
        timer?.cancel()
        armedFor = due
        // Rounded up to the millisecond: a timer that fires a little early just re-arms.
        let delay = max(.zero, due - .now)
        timer = MainLoopActor.schedule(after: .milliseconds(delay.millisecondsRoundedUp)) { [weak self] in self?.fire() }
    }

    private func fire() {
        timer = nil
        armedFor = nil
        let now = ContinuousClock.now
        var cut = 0
        while cut < batchSize, let first = heap.first, first.due <= now {
            heap.removeFirst()
            guard let action = actions.removeValue(forKey: first.id) else { continue } // cancelled
            cut += 1
            action()
        }
        // Skip cancelled entries so the timer is armed for a live one.
        while let first = heap.first, actions[first.id] == nil { heap.removeFirst() }
        if let first = heap.first { arm(for: max(first.due, cut == batchSize ? now + pause : now)) }
    }
}
