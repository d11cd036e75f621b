import ECV
import ECVAgent
import ECVProtocol
import ECVService
import Foundation
import GLibCore
import GStreamer
import MediaTestSupport
import Soup
import Testing

/// A running `ecv` child whose output is collected as it comes.
// @unchecked Sendable: `process` is configured and started in init and afterwards only read
// (isRunning, terminationStatus, processIdentifier) or signalled, which Foundation's Process allows
// from any thread; the collected output is behind `Locked`.
final class RunningECV: @unchecked Sendable {
    let process = Process()
    private let collected = Locked((stdout: "", stderr: ""))

    init(_ arguments: [String], environment: [String: String] = [:], executable: URL = ECVProcess.executable, directory: URL? = nil) throws {
        process.executableURL = executable
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = directory }
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let collected = collected
        PipeReader.read(out.fileHandleForReading) { data in
            collected.withLock { $0.stdout += String(decoding: data, as: UTF8.self) }
            return true
        }
        PipeReader.read(err.fileHandleForReading) { data in
            collected.withLock { $0.stderr += String(decoding: data, as: UTF8.self) }
            return true
        }
    }

    var pid: Int32 { process.processIdentifier }
    var stdout: String { collected.value.stdout }
    var stderr: String { collected.value.stderr }

    /// The exit status, once the process ended within `limit`.
    func exitStatus(within limit: Duration) async throws -> Int32 {
        try await eventually(limit, "\(process.arguments?.prefix(5).joined(separator: " ") ?? "") to exit") { !self.process.isRunning }
        return process.terminationStatus
    }

    func stop() {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }
}

/// The command line under the issue's hostile inputs, with real `ecv` processes: `ecv agent` tells a
/// supervisor when the service dropped it ("One caller disconnects every agent": the socket closed,
/// the agent was logged out, and the bot still exited 0), never prints its token, `ecv call --json`
/// ends with CallEnded and an honest status, `ecv serve` stays on loopback unless told otherwise.
@Suite(.serialized) struct HostileInputCLITests {
    static func agent(_ base: String) throws -> RunningECV {
        try RunningECV(["agent", "--service-url", base, "--name", "Bot", "--receive-only", "--json"])
    }

    @Test func aDroppedAgentSocketMakesTheAgentExitNonZero() async throws {
        let (service, base) = try await startLoopbackService()
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
        let (service, base) = try await startLoopbackService()
        let agent = try Self.agent(base)
        defer { agent.stop() }
        try await eventually(.seconds(20), "the agent ready") { service.acd.snapshot().agents.first?.state == .ready }
        await service.stop()
        #expect(try await agent.exitStatus(within: .seconds(15)) == 1, "stderr: \(agent.stderr)")
    }

    @Test func ctrlCIsACleanLogoutAndExitsZero() async throws {
        let (service, base) = try await startLoopbackService()
        let agent = try Self.agent(base)
        defer { agent.stop() }
        try await eventually(.seconds(20), "the agent ready") { service.acd.snapshot().agents.first?.state == .ready }
        kill(agent.pid, SIGINT)
        #expect(try await agent.exitStatus(within: .seconds(15)) == 0, "stderr: \(agent.stderr)")
        try await eventually(.seconds(5), "the agent logged out") { service.acd.snapshot().agents.isEmpty }
        await service.stop()
    }

    /// The issue's "`ecv agent` prints its token when the socket upgrade fails": a service that
    /// logs the agent in and then refuses its socket. The token travels in a header, and nothing
    /// the bot prints quotes it.
    @Test func theAgentsTokenIsNeverPrintedWhenItsSocketIsRefused() async throws {
        try GStreamerRuntime.ensureInitialized()
        let token = "TOKEN-SECRET-\(UUID().uuidString)"
        let server = HTTPServer()
        server.route("POST", ECVAPI.agentLogin) { _ in try .json(AgentLoginResponse(agentId: "agent-1", token: token)) }
        server.route("GET", ECVAPI.agentSocket) { _ in .text("no sockets here", status: 403) }
        let port = try await server.listen()
        let result = try await ECVProcess.run(["agent", "--service-url", "http://127.0.0.1:\(port)", "--name", "Bot", "--receive-only"],
                                              timeout: .seconds(30))
        await server.stop()
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stderr.contains("socket"), "it says what failed: \(result.stderr)")
        #expect(!(result.stdout + result.stderr).contains(token), "the token leaked: \(result.stderr)")
    }

    /// `ecv call --json` always ends with its CallEnded line, and exits non-zero when the call did
    /// not end cleanly (here: the service went away mid-call).
    @Test func callJSONEndsWithCallEndedAndFailsWhenTheServiceGoesAway() async throws {
        let (service, base) = try await startLoopbackService()
        let agent = try Self.agent(base)
        defer { agent.stop() }
        try await eventually(.seconds(20), "the agent ready") { service.acd.snapshot().agents.first?.state == .ready }
        let caller = try RunningECV(["call", "--service-url", base, "--name", "Jane", "--width", "160", "--height", "120",
                                     "--no-audio-processing", "--json"])
        defer { caller.stop() }
        try await eventually(.seconds(20), "the call connected") { caller.stdout.contains(#""event":"WebRtcConnected""#) }
        await service.stop()
        let status = try await caller.exitStatus(within: .seconds(30))
        let lines = caller.stdout.split(separator: "\n")
        let last = lines.last.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(last?["event"] as? String == "CallEnded", "the last line: \(lines.suffix(3))")
        #expect(status == 1, "a call the service ended is not a success: \(caller.stderr)")
    }

    /// The issue's "listens on 0.0.0.0": without `--host`, `ecv serve` listens on loopback only
    /// (the kernel's table of listening sockets says so, not just the banner).
    @Test func serveListensOnLoopbackOnlyByDefault() async throws {
        let serve = try RunningECV(["serve", "--open-agents", "--port", "0"])
        defer { serve.stop() }
        try await eventually(.seconds(20), "the banner") { serve.stdout.contains("listening on loopback only") }
        let banner = serve.stdout
        let portText = try #require(banner.range(of: #"listening on 127\.0\.0\.1:(\d+)"#, options: .regularExpression)
            .map { banner[$0].split(separator: ":").last.map(String.init) } ?? nil)
        let port = try #require(UInt16(portText))
        let table = try String(contentsOfFile: "/proc/net/tcp", encoding: .utf8)
        let listening = table.split(separator: "\n").dropFirst().compactMap { line -> String? in
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count > 3, fields[3] == "0A" else { return nil } // TCP_LISTEN
            return String(fields[1])
        }
        let hexPort = String(format: "%04X", port)
        #expect(listening.contains("0100007F:\(hexPort)"), "listening on 127.0.0.1:\(port)")
        #expect(!listening.contains("00000000:\(hexPort)"), "not on every interface")
        kill(serve.pid, SIGINT)
        #expect(try await serve.exitStatus(within: .seconds(15)) == 0)
    }

    /// docs/protocol.md §1.3 from the command line: `--attr-default` replaces the seed's Danamon
    /// defaults, `--queue-attr-default` sets a queue's own; the agent's offers show them.
    @Test func serveConfiguresTheAttachedDataDefaults() async throws {
        let serve = try RunningECV(["serve", "--open-agents", "--port", "0", "--queue", "default", "--queue", "Billing",
                                    "--attr-default", "video_language=en", "--queue-attr-default", "Billing:video_flow=ETB"])
        defer { serve.stop() }
        try await eventually(.seconds(20), "the banner") { serve.stdout.contains("listening on loopback only") }
        let banner = serve.stdout
        let portText = try #require(banner.range(of: #"listening on 127\.0\.0\.1:(\d+)"#, options: .regularExpression)
            .map { banner[$0].split(separator: ":").last.map(String.init) } ?? nil)
        let base = "http://127.0.0.1:\(try #require(UInt16(portText)))"
        let offers = Locked<[CallOffer]>([])
        let bot = try AgentBot(configuration: AgentBotConfiguration(serviceUrl: base, name: "Alice", queues: ["default", "Billing"],
                                                                    acceptPolicy: { offer in offers.withLock { $0.append(offer) }; return false }))
        try await bot.connect()
        try await bot.ready()
        let sdk = try ECVSdk(config: ECVSdkConfiguration(name: "cli", serviceUrl: base))
        var calls: [VideoCall] = []
        for queue in ["default", "Billing"] {
            let call = try #require(await sdk.createVideoCall())
            await call.start(dialCallParameters: DialCallParameters(callerName: "Jane", queue: queue))
            calls.append(call)
        }
        try await eventually(.seconds(10), "both offers") { offers.value.count == 2 }
        #expect(offers.value.map(\.queue) == ["default", "Billing"])
        #expect(offers.value.map(\.attributes) == [["video_language": "en"], ["video_flow": "ETB"]])
        for call in calls { call.hangup() }
        await bot.logout()
        kill(serve.pid, SIGINT)
        #expect(try await serve.exitStatus(within: .seconds(15)) == 0)
    }
}
