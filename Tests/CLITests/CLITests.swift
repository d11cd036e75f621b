import ECV
import ECVAgent
import ECVProtocol
import ECVService
import Foundation
import GStreamer
import MediaTestSupport
import Testing

/// Runs the built `ecv` executable (it sits next to the test bundle in `.build/<config>/`).
struct ECVProcess {
    static var executable: URL { BuiltExecutable.url(named: "ecv") }

    /// Runs `ecv arguments…` to completion (bounded), returning its exit status and output.
    static func run(_ arguments: [String], environment: [String: String] = [:], directory: URL? = nil, timeout: Duration = .seconds(60))
        async throws -> (status: Int32, stdout: String, stderr: String) {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = directory }
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let deadline = ContinuousClock.now + timeout
        // Blocking reads run on GCD threads: on the 2-thread cooperative pool they would starve the
        // in-process service the child talks to.
        async let stdout = readToEnd(out)
        async let stderr = readToEnd(err)
        while process.isRunning {
            if ContinuousClock.now > deadline { process.terminate() }
            try await Task.sleep(for: .milliseconds(50))
        }
        return (process.terminationStatus, await stdout, await stderr)
    }

    private static func readToEnd(_ pipe: Pipe) async -> String {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(returning: String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self))
            }
        }
    }
}

/// A reference service on loopback for the `ecv` processes a test runs: open agents, calls
/// routed at once, and the STUN entry the SDK requires (loopback calls use host candidates).
func startLoopbackService(configure: (inout ReferenceServiceConfiguration) -> Void = { _ in })
    async throws -> (service: ReferenceService, base: String) {
    try GStreamerRuntime.ensureInitialized()
    var configuration = ReferenceServiceConfiguration()
    configuration.iceServers = [ECVProtocol.ICEServer(urls: ["stun:127.0.0.1:3478"])]
    configuration.acd.queueEntryDelay = 0
    configuration.openAgents = true
    configure(&configuration)
    let service = try ReferenceService(configuration: configuration)
    let base = try await service.start().absoluteString.trimmingCharacters(in: CharacterSet(charactersIn: "/"))
    return (service, base)
}

/// A logged-in, ready agent bot on the loopback service at `base` (320×240, no audio processing).
func startLoopbackAgent(named name: String, queue: String = "default", base: String,
                        configure: (inout AgentBotConfiguration) -> Void = { _ in }) async throws -> AgentBot {
    var configuration = AgentBotConfiguration(serviceUrl: base, name: name, queues: [queue],
                                              parameters: ConnectParameters(videoWidth: 320, videoHeight: 240, noAudioProcessing: true))
    configuration.iceServers = [ICEServer(urls: ["stun:127.0.0.1:3478"])]
    configure(&configuration)
    let bot = try AgentBot(configuration: configuration)
    try await bot.connect()
    try await bot.ready()
    return bot
}

@Suite(.serialized) struct CLITests {
    @Test func pipelineShowsX264WithItsBitrateUnitAndSize() async throws {
        let result = try await ECVProcess.run(["pipeline", "--codec", "H264", "--width", "1280", "--height", "720", "--bitrate", "1500", "--hw", "off"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("x264enc"))
        #expect(result.stdout.contains("bitrate=1500"))
        #expect(result.stdout.contains("width=1280,height=720"))
    }

    @Test func pipelineShowsVP8TargetBitrateInBitsPerSecond() async throws {
        let result = try await ECVProcess.run(["pipeline", "--codec", "VP8", "--bitrate", "800"])
        #expect(result.status == 0)
        #expect(result.stdout.contains("vp8enc"))
        #expect(result.stdout.contains("target-bitrate=800000"))
        let dot = try await ECVProcess.run(["pipeline", "--codec", "VP8", "--format", "dot"])
        #expect(dot.status == 0 && dot.stdout.hasPrefix("digraph"))
    }

    @Test func unsupportedCodecExitsNonZeroNamingIt() async throws {
        let result = try await ECVProcess.run(["pipeline", "--codec", "AV1"])
        #expect(result.status != 0)
        #expect(result.stderr.contains("AV1"))
        let unknownOption = try await ECVProcess.run(["pipeline", "--colour", "blue"])
        #expect(unknownOption.status == 2 && unknownOption.stderr.contains("--colour"))
    }

    @Test func hardwareRequestFallsBackToSoftwareAndSaysSo() async throws {
        let result = try await ECVProcess.run(["pipeline", "--codec", "H264", "--hw", "on"])
        #expect(result.status == 0)
        #expect(result.stdout.contains("x264enc"))
        #expect(result.stderr.lowercased().contains("hardware"), "the decision is printed: \(result.stderr)")
    }

    @Test func doctorListsCodecsAndEncoders() async throws {
        let result = try await ECVProcess.run(["doctor"])
        #expect(result.status == 0)
        for expected in ["VP8", "H264", "x264enc", "vp8enc", "AV1", "WebRTC"] { #expect(result.stdout.contains(expected), "\(expected)") }
    }

    @Test func environmentsPersistAndValidateAttributes() async throws {
        let home = PrivateConfigHome()
        defer { home.remove() }
        let env = home.environment
        let list = try await ECVProcess.run(["env", "list"], environment: env)
        #expect(list.stdout.contains("danamon-local"), "the Danamon example ships built in")
        let add = try await ECVProcess.run(["env", "add", "staging", "--service-url", "http://127.0.0.1:1", "--queue-mode", "info",
                                            "--attr-select", "video_flow=Video Flow:ETB,NTB"], environment: env)
        #expect(add.status == 0, "\(add.stderr)")
        #expect(try await ECVProcess.run(["env", "use", "staging"], environment: env).status == 0)
        let after = try await ECVProcess.run(["env", "list"], environment: env)
        #expect(after.stdout.contains("* staging") && after.stdout.contains("queue-mode=info"))
        let invalid = try await ECVProcess.run(["call", "--attr", "video_flow=XYZ"], environment: env)
        #expect(invalid.status == 2 && invalid.stderr.contains("ETB"), "\(invalid.stderr)")
        #expect(try await ECVProcess.run(["env", "remove", "staging"], environment: env).status == 0)
    }

    /// `ecv serve` admits agents only with a secret unless told otherwise, and says so.
    @Test func serveRefusesToRunWithoutAnAgentPolicy() async throws {
        let result = try await ECVProcess.run(["serve", "--port", "0"], timeout: .seconds(30))
        #expect(result.status == 2, "\(result.stderr)")
        #expect(result.stderr.contains("--agent-secret") && result.stderr.contains("--open-agents"), "\(result.stderr)")
        let badFile = try await ECVProcess.run(["serve", "--agent-secret-file", "/nonexistent/secrets"], timeout: .seconds(30))
        #expect(badFile.status == 2 && badFile.stderr.contains("cannot read"), "\(badFile.stderr)")
    }

    /// `ecv call --json`: one JSON object per line, a script can follow the whole call.
    @Test func callJSONEmitsOneEventPerLine() async throws {
        let (service, base) = try await startLoopbackService()
        let bot = try await startLoopbackAgent(named: "Scripted", base: base)
        let result = try await ECVProcess.run(["call", "--service-url", base, "--name", "Script", "--width", "320", "--height", "240",
                                               "--no-audio-processing", "--duration", "2.5", "--json"], timeout: .seconds(60))
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n")
        let objects = lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(objects.count == lines.count, "every line is one JSON object")
        let events = objects.compactMap { $0["event"] as? String }
        for expected in ["GotRtcId", "DialSuccess", "OnQueue", "AgentConnected", "WebRtcConnected", "Stats", "Hangup", "CallEnded"] {
            #expect(events.contains(expected), "\(expected) in \(events)")
        }
        #expect(objects.last?["detail"] as? String == "LOCAL_HANGUP")
        await bot.logout()
        await service.stop()
    }
}
