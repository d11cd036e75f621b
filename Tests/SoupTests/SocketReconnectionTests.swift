import GLibCore
import MediaTestSupport
import Soup
import Testing

extension SoupTests {
    /// `SocketReconnection`'s policy against a real server: a close that is a loss is reopened
    /// and read on, one that is an answer ends the loop, and a socket that cannot be reopened
    /// within the window is closed for good with the last failure.
    @Suite("Socket reconnection") struct SocketReconnectionTests {
        private static let policy = SocketReconnection(window: .seconds(5), answers: [1000, 4401])

        /// Runs the policy's loop from a fresh socket to `base`/ws, reopening with `reopen`.
        private static func run(base: String, policy: SocketReconnection = policy,
                                reopen: @escaping @Sendable () async throws(HTTPError) -> WebSocketConnection)
            async throws -> (events: [SocketReconnection.Event], texts: [String], resumed: [(WebSocketConnection, WebSocketConnection)], first: WebSocketConnection) {
            let first = try await WebSocketClient.connect(url: base.replacingOccurrences(of: "http://", with: "ws://") + "/ws")
            let seen = Locked((events: [SocketReconnection.Event](), texts: [String](), resumed: [(WebSocketConnection, WebSocketConnection)]()))
            try await within(15, "the reconnection loop ending") {
                await policy.run(
                    from: first,
                    read: { connection in
                        for await event in connection.events {
                            switch event {
                            case .text(let text): seen.withLock { $0.texts.append(text) }
                            case .closed(let code, let reason): return .closed(code: code, reason: reason)
                            case .binary, .error: continue
                            }
                        }
                        return .closed(code: 1006, reason: "connection lost")
                    },
                    reopen: reopen, isTransient: \.isTransient,
                    resume: { reopened, lost in
                        seen.withLock { $0.resumed.append((reopened, lost)) }
                        return .resumed
                    },
                    report: { event in seen.withLock { $0.events.append(event) } })
            }
            let result = seen.value
            return (result.events, result.texts, result.resumed, first)
        }

        @Test func aLossIsReopenedAndReadOnUntilAnAnswerEndsIt() async throws {
            let accepted = AcceptedSockets()
            try await withServer({ accepted.install(on: $0) }) { _, base in
                let url = base.replacingOccurrences(of: "http://", with: "ws://") + "/ws"
                let serving = Task {
                    let (lost, _) = try await accepted.next()
                    try lost.send(text: "one")
                    try lost.close(code: 4000, reason: "restarting")
                    let (second, _) = try await accepted.next()
                    try second.send(text: "two")
                    try second.close(code: 4401, reason: "unauthorized")
                }
                let run = try await Self.run(base: base) { () async throws(HTTPError) in try await WebSocketClient.connect(url: url) }
                try await serving.value
                #expect(run.events == [.reconnecting(code: 4000, reason: "restarting"), .reconnected,
                                       .closedForGood(code: 4401, reason: "unauthorized", failure: nil)])
                #expect(run.texts == ["one", "two"])
                #expect(run.resumed.count == 1)
                #expect(run.resumed.first?.1 === run.first)
                #expect(run.resumed.first?.0 !== run.first)
            }
        }

        @Test func anAnswerIsFinalAndNothingIsReopened() async throws {
            let accepted = AcceptedSockets()
            try await withServer({ accepted.install(on: $0) }) { _, base in
                let serving = Task {
                    let (socket, _) = try await accepted.next()
                    try socket.close(code: 1000, reason: "call over")
                }
                let reopens = Locked(0)
                let run = try await Self.run(base: base) { () async throws(HTTPError) in
                    reopens.withLock { $0 += 1 }
                    throw .cancelled(url: "never reopened")
                }
                try await serving.value
                #expect(run.events == [.closedForGood(code: 1000, reason: "call over", failure: nil)])
                #expect(reopens.value == 0)
                #expect(run.resumed.isEmpty)
            }
        }

        @Test func aSocketNotReopenedWithinTheWindowIsClosedForGoodWithTheLastFailure() async throws {
            let accepted = AcceptedSockets()
            try await withServer({ accepted.install(on: $0) }) { _, base in
                let serving = Task {
                    let (socket, _) = try await accepted.next()
                    try socket.close(code: 4000, reason: "restarting")
                }
                let gone = "ws://127.0.0.1:\(closedPort())/ws"
                let attempts = Locked(0)
                let policy = SocketReconnection(window: .milliseconds(400), answers: [1000],
                                                backoff: Backoff(initial: .milliseconds(20), maximum: .milliseconds(50)))
                let run = try await Self.run(base: base, policy: policy) { () async throws(HTTPError) in
                    attempts.withLock { $0 += 1 }
                    return try await WebSocketClient.connect(url: gone)
                }
                try await serving.value
                #expect(run.events.count == 2)
                #expect(run.events.first == .reconnecting(code: 4000, reason: "restarting"))
                guard case .closedForGood(4000, "restarting", let failure?)? = run.events.last else {
                    Issue.record("not closed for good with a failure: \(run.events)")
                    return
                }
                #expect(failure.contains("attempts"))
                #expect(attempts.value > 1)
                #expect(run.resumed.isEmpty)
            }
        }

        @Test func aZeroWindowNeverReopens() {
            let never = SocketReconnection(window: .zero, answers: [1000])
            #expect(!never.mayReconnect(afterClose: 1006))
            #expect(Self.policy.mayReconnect(afterClose: 1006))
            #expect(Self.policy.mayReconnect(afterClose: 4000))
            #expect(!Self.policy.mayReconnect(afterClose: 4401))
        }
    }
}
