import ECV
import ECVAgent
import ECVService
import Foundation
import MediaTestSupport
import Testing

/// What scripts and supervisors read: log levels and timestamped (or JSON) log lines, `--json`
/// output that holds JSON objects only, agent text that reads as sentences, `ecv kyc` with the
/// same default ICE server as `ecv call`, and the TLS pin in the serve banner.
@Suite(.serialized) struct LoggingAndOutputTests {
    /// Starts with a UTC ISO 8601 time with milliseconds and a space.
    static func stamped(_ line: Substring) -> Bool { line.firstMatch(of: #/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z /#) != nil }

    static func jsonObjects(_ text: String) -> (objects: [[String: Any]], lines: Int) {
        let lines = text.split(separator: "\n")
        return (lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }, lines.count)
    }

    /// The SDK logger's lines of a stderr text: GLib's and GStreamer's own warnings ("(ecv:PID):
    /// GLib-CRITICAL …", with blank lines around them) do not go through it.
    static func ownLines(_ text: String) -> String {
        text.split(separator: "\n").filter { !$0.hasPrefix("(ecv:") && !$0.trimmingCharacters(in: .whitespaces).isEmpty }.joined(separator: "\n")
    }

    /// Starts `ecv serve` with `arguments`, waits until it printed `until`, stops it with SIGTERM.
    static func serveOutput(_ arguments: [String], environment: [String: String] = [:], until: String) async throws -> (stdout: String, stderr: String) {
        let serve = try RunningECV(["serve", "--open-agents", "--port", "0"] + arguments, environment: environment)
        defer { serve.stop() }
        try await eventually(.seconds(10), "ecv serve printed \(until)") { serve.stdout.contains(until) }
        kill(serve.pid, SIGTERM)
        #expect(try await serve.exitStatus(within: .seconds(10)) == 0, "\(serve.stderr)")
        return (serve.stdout, serve.stderr)
    }

    @Test func serveLogLinesAreTimestampedOrJSONAndFollowTheLevel() async throws {
        let text = try await Self.serveOutput(["--log"], until: "ICE servers")
        let entry = try #require(text.stdout.split(separator: "\n").first { $0.contains("[lifecycle] listening on") }, "\(text.stdout)")
        #expect(Self.stamped(entry), "\(entry)")

        let json = try await Self.serveOutput(["--log-format", "json", "-v"], until: "ICE servers")
        let objects = Self.jsonObjects(json.stdout).objects
        let listening = try #require(objects.first { ($0["message"] as? String)?.hasPrefix("listening on") == true }, "\(json.stdout)")
        #expect(listening["category"] as? String == "lifecycle" && (listening["time"] as? String)?.firstMatch(of: /Z$/) != nil, "\(listening)")

        let fromEnvironment = try await Self.serveOutput([], environment: ["ECV_LOG_LEVEL": "info"], until: "ICE servers")
        #expect(fromEnvironment.stdout.contains("[lifecycle] listening on"), "\(fromEnvironment.stdout)")
        let quiet = try await Self.serveOutput(["-q"], environment: ["ECV_LOG_LEVEL": "info"], until: "ICE servers")
        #expect(!quiet.stdout.contains("[lifecycle]"), "-q wins over the environment: \(quiet.stdout)")
        let byDefault = try await Self.serveOutput([], until: "ICE servers")
        #expect(!byDefault.stdout.contains("[lifecycle]"), "warn, the default, prints no event log: \(byDefault.stdout)")
    }

    /// `ecv serve --tls-cert` prints the pin clients need: the certificate key's SPKI SHA-256.
    @Test func serveWithTLSPrintsTheSPKIPin() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ecv-pin-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let certificate = directory.appendingPathComponent("cert.pem").path, key = directory.appendingPathComponent("key.pem").path
        try shell("openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=localhost -days 1 "
            + "-keyout \(key) -out \(certificate) 2>/dev/null")
        let expected = try shell("openssl x509 -in \(certificate) -pubkey -noout | openssl pkey -pubin -outform der "
            + "| openssl dgst -sha256 -binary | base64").trimmingCharacters(in: .whitespacesAndNewlines)
        let output = try await Self.serveOutput(["--tls-cert", certificate, "--tls-key", key], until: "TLS pin")
        #expect(output.stdout.contains("TLS pin        sha256/\(expected)"), "\(output.stdout)")
    }

    /// One call between `ecv agent` (text, JSON logs) and `ecv call` (`--json`, timestamped logs).
    @Test func jsonOutputIsPureAndAgentTextReadsAsSentences() async throws {
        let (service, base) = try await startLoopbackService()
        let agent = try RunningECV(["agent", "--service-url", base, "--calls", "1", "--width", "160", "--height", "120",
                                    "--no-audio-processing", "-v", "--log-format", "json"])
        defer { agent.stop() }
        try await eventually(.seconds(20), "the agent ready") { agent.stdout.contains("agent: ready as") }
        let call = try await ECVProcess.run(["call", "--service-url", base, "--width", "160", "--height", "120", "--no-audio-processing",
                                             "--duration", "1", "--json", "-v"], timeout: .seconds(40))
        #expect(call.status == 0, "\(call.stderr)")
        let (objects, lines) = Self.jsonObjects(call.stdout)
        #expect(objects.count == lines && lines > 5, "only JSON on stdout: \(call.stdout)")
        let logLines = Self.ownLines(call.stderr).split(separator: "\n")
        #expect(!logLines.isEmpty && logLines.allSatisfy(Self.stamped), "timestamped INFO lines: \(call.stderr)")
        #expect(logLines.contains { $0.contains(" INFO ") }, "-v shows info: \(call.stderr)")

        #expect(try await agent.exitStatus(within: .seconds(20)) == 0, "\(agent.stderr)")
        #expect(agent.stdout.contains(": media connected") && agent.stdout.contains(": receiving the caller's video (VP8)"), "\(agent.stdout)")
        #expect(!agent.stdout.contains("what=") && !agent.stdout.contains("(kind:"), "no Swift dumps: \(agent.stdout)")
        let (agentLogs, agentLogLines) = Self.jsonObjects(Self.ownLines(agent.stderr))
        #expect(agentLogs.count == agentLogLines && agentLogs.contains { $0["level"] as? String == "info" }, "JSON log lines: \(agent.stderr)")
        await service.stop()
    }

    /// Against a service that advertises no ICE server, `ecv kyc` uses the default STUN entry as
    /// `ecv call` does (it failed with NO_ICE_SERVERS_FOUND), and `--json` prints JSON only.
    @Test func kycAgainstADefaultServiceCompletesWithJSONOnly() async throws {
        let (service, base) = try await startLoopbackService { configuration in
            configuration.iceServers = []
            configuration.verification.apiKeys = ["key"]
        }
        var configuration = AgentBotConfiguration(serviceUrl: base, name: "Verifier", queues: ["default"],
                                                  parameters: ConnectParameters(videoWidth: 160, videoHeight: 120, noAudioProcessing: true))
        configuration.iceServers = []
        let bot = try AgentBot(configuration: configuration)
        try await bot.connect()
        try await bot.ready()
        let script = try AgentScript("verdict APPROVED \"documents match\", hangup after 1s")
        let events = bot.events()
        let runner = Task {
            for await case .callStarted(let call) in events {
                for await event in call.events() where event == .textChannelOpen { await script.run(on: call) }
            }
        }
        defer { runner.cancel() }
        let result = try await ECVProcess.run(["kyc", "--service-url", base, "--api-key", "key", "--json"], timeout: .seconds(40))
        #expect(result.status == 0, "\(result.stderr)")
        let (objects, lines) = Self.jsonObjects(result.stdout)
        #expect(objects.count == lines, "only JSON on stdout: \(result.stdout)")
        let summary = try #require(objects.last)
        #expect(summary["event"] as? String == "summary" && (summary["verdict"] as? String)?.hasPrefix("APPROVED") == true, "\(summary)")
        #expect(!result.stdout.contains("NO_ICE_SERVERS_FOUND"))
        await bot.logout()
        await service.stop()
    }

    /// `ecv doctor --json --service-url URL`: one JSON object, with the service's queues.
    @Test func doctorJSONIsOneObject() async throws {
        let (service, base) = try await startLoopbackService { $0.queues = ["default", "Billing"] }
        let result = try await ECVProcess.run(["doctor", "--json", "--service-url", base])
        #expect(result.status == 0, "\(result.stderr)")
        let (objects, lines) = Self.jsonObjects(result.stdout)
        #expect(objects.count == 1 && lines == 1, "\(result.stdout)")
        let codecs = try #require(objects.first?["videoCodecs"] as? [[String: Any]])
        #expect(codecs.contains { $0["codec"] as? String == "VP8" && $0["encoder"] as? String == "vp8enc" }, "\(codecs)")
        #expect(codecs.contains { $0["codec"] as? String == "AV1" && $0["available"] as? Bool == false }, "\(codecs)")
        let queues = try #require((objects.first?["service"] as? [String: Any])?["queues"] as? [[String: Any]], "\(result.stdout)")
        #expect(queues.compactMap { $0["name"] as? String } == ["default", "Billing"] && queues.allSatisfy { $0["staffedAgents"] as? Int == 0 },
                "\(queues)")
        let unreachable = try await ECVProcess.run(["doctor", "--service-url", "http://127.0.0.1:9"])
        #expect(unreachable.status == 1 && unreachable.stderr.contains("does not answer"), "\(unreachable.stderr)")
        await service.stop()
    }
}

/// Runs a shell command line; its standard output, or an error naming the line and its status.
@discardableResult
func shell(_ line: String) throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/bin/sh")
    process.arguments = ["-c", line]
    let out = Pipe()
    process.standardOutput = out
    try process.run()
    let data = out.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else { throw ShellError(line: line, status: process.terminationStatus) }
    return String(decoding: data, as: UTF8.self)
}

struct ShellError: Error, CustomStringConvertible {
    let line: String
    let status: Int32
    var description: String { "`\(line)` exited \(status)" }
}
