import ECVProtocol
import ECVService
import Foundation
import MediaTestSupport
import Soup
import Synchronization
import Testing

extension ServiceTests {
    @Suite("Concurrent calls") struct ConcurrencyTests {
        /// One caller: dial, wait on the queue socket until the agent hung up. Returns the pushes.
        private func call(_ test: TestService, name: String) async throws -> [QueueSocketMessage] {
            let rtcId = try await test.dial(name)
            let socket = try await test.queueSocket(rtcId)
            var pushes: [QueueSocketMessage] = []
            while true {
                let event = try await socket.next("the pushes of \(name)")
                switch event {
                case .text(let text): pushes.append(try ECVJSON.decode(QueueSocketMessage.self, from: text))
                case .closed(let code, _):
                    #expect(code == ECVCloseCode.normal)
                    return pushes
                default: continue
                }
            }
        }

        /// An agent that accepts every offer and hangs up as soon as the call connects.
        private func serve(_ agent: AgentProbe, handled: Tally) async throws {
            while true {
                switch try await agent.next() {
                case .offer(let offer): try agent.send(.accept(rtcId: offer.rtcId))
                case .callConnected(let rtcId, _): try agent.send(.hangup(rtcId: rtcId))
                case .callEnded(_, .agentHangup): handled.add(agent.id)
                case .error(_, let code, let message): Issue.record("agent \(agent.id) got \(code): \(message)")
                default: continue
                }
            }
        }

        @Test func fiftyConcurrentCallsGoThroughTheACD() async throws {
            let test = try await TestService.start()
            var agents: [AgentProbe] = []
            for index in 0..<5 { agents.append(try await test.agent("Agent \(index)")) }
            let handled = Tally()
            let results = try await withThrowingTaskGroup(of: [QueueSocketMessage]?.self) { group in
                for agent in agents {
                    group.addTask {
                        do {
                            try await self.serve(agent, handled: handled)
                        } catch where Task.isCancelled {
                            // Every caller is done; the agents stop listening.
                        }
                        return nil
                    }
                }
                let callers = try await withThrowingTaskGroup(of: [QueueSocketMessage].self) { callers in
                    for index in 0..<50 { callers.addTask { try await self.call(test, name: "Caller \(index)") } }
                    var all: [[QueueSocketMessage]] = []
                    for try await pushes in callers { all.append(pushes) }
                    return all
                }
                // The agents learn each end a moment after the callers do.
                try await within(10, "the agents counting every call") { await handled.wait(for: 50) }
                group.cancelAll()
                return callers
            }
            #expect(results.count == 50)
            for pushes in results {
                // The socket opened at some point of the call; what it saw is a suffix of the whole story.
                let kinds: [QueueSocketMessage.Kind] = pushes.map { $0.kind }
                let story: [QueueSocketMessage.Kind] = [.waiting, .agentConnected, .callEnded]
                #expect(story.reversed().starts(with: kinds.reversed()) && !kinds.isEmpty, "\(kinds)")
                if case .callEnded(_, let reason)? = pushes.last { #expect(reason == .agentHangup) }
            }
            #expect(handled.total == 50)
            let snapshot = test.service.acd.snapshot()
            #expect(snapshot.interactions.isEmpty)
            #expect(snapshot.rememberedEndedCalls == 50)
            #expect(snapshot.agents.allSatisfy { $0.state == .ready })
            await test.stop()
        }
    }
}

/// Calls counted per agent, from several tasks.
final class Tally: Sendable {
    private struct State {
        var counts: [String: Int] = [:]
        var waiters: [(total: Int, continuation: CheckedContinuation<Void, Never>)] = []
    }

    private let state = Mutex(State())

    func add(_ key: String) {
        let ready = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.counts[key, default: 0] += 1
            let total = state.counts.values.reduce(0, +)
            let ready = state.waiters.filter { $0.total <= total }.map(\.continuation)
            state.waiters.removeAll { $0.total <= total }
            return ready
        }
        ready.forEach { $0.resume() }
    }

    var total: Int { state.withLock { $0.counts.values.reduce(0, +) } }

    /// Returns once `total` calls were counted.
    func wait(for total: Int) async {
        await withCheckedContinuation { continuation in
            let reached = state.withLock { state -> Bool in
                if state.counts.values.reduce(0, +) >= total { return true }
                state.waiters.append((total, continuation))
                return false
            }
            if reached { continuation.resume() }
        }
    }
}
