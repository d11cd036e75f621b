import ECV
import ECVAgent
import ECVProtocol
import ECVService
import Foundation
import GStreamer
import Testing

/// A caller process killed mid-call (SIGKILL: no Hangup, no bye) leaves no zombie call: the
/// service ends it with CALLER_LOST within its caller-loss timeout and the agent is free again.
@Suite(.serialized) struct CallerKillTests {
    @Test func aKilledCallerProcessEndsItsCallAndFreesTheAgent() async throws {
        let (service, base) = try await startLoopbackService { $0.callerLossTimeout = .seconds(3) }
        let bot = try await startLoopbackAgent(named: "Alice", base: base)

        let caller = Process()
        caller.executableURL = ECVProcess.executable
        caller.arguments = ["call", "--service-url", base, "--name", "Doomed", "--width", "320", "--height", "240",
                            "--no-audio-processing", "--json"]
        caller.standardOutput = FileHandle.nullDevice
        caller.standardError = FileHandle.nullDevice
        try caller.run()
        defer { if caller.isRunning { caller.terminate() } }
        let agentState = { service.acd.snapshot().agents.first }
        try await eventually(.seconds(30), "the agent busy with the call") { agentState()?.state == .busy }
        let rtcId = try #require(agentState()?.rtcId)
        kill(caller.processIdentifier, SIGKILL)
        caller.waitUntilExit()
        let killedAt = ContinuousClock.now

        try await eventually(.seconds(15), "the agent free again") { agentState()?.state == .ready }
        let waited = ContinuousClock.now - killedAt
        let ended = service.log.entries(rtcId: rtcId).contains { $0.message.contains("CALLER_LOST") || $0.message.contains("vanished") }
        #expect(ended, "the service ended the call for a vanished caller")
        print("killed caller: agent free after \(waited)")
        await bot.logout()
        await service.stop()
    }
}

/// Polls `condition` every 50 ms until it holds or `limit` passes.
func eventually(_ limit: Duration, _ what: String, _ condition: () -> Bool) async throws {
    let deadline = ContinuousClock.now + limit
    while !condition() {
        guard ContinuousClock.now < deadline else { throw CallerKillTimeout(what: what) }
        try await Task.sleep(for: .milliseconds(50))
    }
}

struct CallerKillTimeout: Error, CustomStringConvertible {
    let what: String
    var description: String { "timed out waiting for \(what)" }
}
