import ECV
import ECVProtocol
import ECVService
import Foundation
import GStreamer
import Soup
import Testing

/// A running `ecv` child whose output is collected as it comes.
// @unchecked Sendable: `process` is configured and started in init and afterwards only read
// (isRunning, terminationStatus, processIdentifier) or signalled, which Foundation's Process allows
// from any thread; the collected output is behind `Locked`.
final class RunningECV: @unchecked Sendable {
    let process = Process()
    private let collected = Locked((stdout: "", stderr: ""))

    init(_ arguments: [String], environment: [String: String] = [:]) throws {
        process.executableURL = ECVProcess.executable
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        let collected = collected
        out.fileHandleForReading.readabilityHandler = { handle in
            let text = String(decoding: handle.availableData, as: UTF8.self)
            collected.withLock { $0.stdout += text }
        }
        err.fileHandleForReading.readabilityHandler = { handle in
            let text = String(decoding: handle.availableData, as: UTF8.self)
            collected.withLock { $0.stderr += text }
        }
        try process.run()
    }

    var pid: Int32 { process.processIdentifier }
    var stdout: String { collected.value.stdout }
    var stderr: String { collected.value.stderr }

    /// The exit status, once the process ended within `limit`.
    func exitStatus(within limit: Duration) async throws -> Int32 {
        try await eventually(limit, "ecv \(process.arguments?.first ?? "") to exit") { !self.process.isRunning }
        return process.terminationStatus
    }

    func stop() {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }
}

/// `ecv agent` tells a supervisor when the service dropped it (the issue's "One caller disconnects
/// every agent": the socket closed, the agent was logged out, and the bot still exited 0).
@Suite(.serialized) struct AgentExitTests {
    static func service() async throws -> (ReferenceService, String) {
        try GStreamerRuntime.ensureInitialized()
        var configuration = ReferenceServiceConfiguration()
        configuration.openAgents = true
        let service = try ReferenceService(configuration: configuration)
        let base = try await service.start().absoluteString.trimmingCharacters(in: CharacterSet(charactersIn: "/"))
        return (service, base)
    }

    static func agent(_ base: String) throws -> RunningECV {
        try RunningECV(["agent", "--service-url", base, "--name", "Bot", "--receive-only", "--json"])
    }

    @Test func aDroppedAgentSocketMakesTheAgentExitNonZero() async throws {
        let (service, base) = try await Self.service()
        let agent = try Self.agent(base)
        defer { agent.stop() }
        try await eventually(.seconds(20), "the agent logged in and ready") {
            service.acd.snapshot().agents.first?.state == .ready
        }
        let agentId = try #require(service.acd.snapshot().agents.first?.agentId)

        // The issue's trigger: a 4.5 MiB callerName. It is refused before it is read, and the
        // agent's socket stays up.
        let huge = #"{"rtcId":"a","callerName":""# + String(repeating: "x", count: 9 << 19) + #""}"#
        var request = HTTPRequest(method: "POST", url: base + ECVAPI.dialEx, body: Array(huge.utf8))
        request.headers["Content-Type"] = "application/json"
        #expect(try await HTTPClient().send(request).status == 413)
        #expect(agent.process.isRunning && service.acd.hasAgent(agentId), "the agent is still there")

        // Whatever drops the socket, the bot has been logged out: it must not look like success.
        #expect(service.script.dropAgentSocket(agentId: agentId))
        let status = try await agent.exitStatus(within: .seconds(15))
        #expect(status == 1, "stdout: \(agent.stdout)\nstderr: \(agent.stderr)")
        #expect(agent.stderr.contains("closed unexpectedly"), "\(agent.stderr)")
        #expect(agent.stdout.contains(#""event":"disconnected""#), "\(agent.stdout)")
        #expect(!service.acd.hasAgent(agentId), "the service logged the agent out")
        await service.stop()
    }

    @Test func theServiceGoingAwayIsAFailureToo() async throws {
        let (service, base) = try await Self.service()
        let agent = try Self.agent(base)
        defer { agent.stop() }
        try await eventually(.seconds(20), "the agent ready") { service.acd.snapshot().agents.first?.state == .ready }
        await service.stop()
        #expect(try await agent.exitStatus(within: .seconds(15)) == 1, "stderr: \(agent.stderr)")
    }

    @Test func ctrlCIsACleanLogoutAndExitsZero() async throws {
        let (service, base) = try await Self.service()
        let agent = try Self.agent(base)
        defer { agent.stop() }
        try await eventually(.seconds(20), "the agent ready") { service.acd.snapshot().agents.first?.state == .ready }
        kill(agent.pid, SIGINT)
        #expect(try await agent.exitStatus(within: .seconds(15)) == 0, "stderr: \(agent.stderr)")
        try await eventually(.seconds(5), "the agent logged out") { service.acd.snapshot().agents.isEmpty }
        await service.stop()
    }
}
