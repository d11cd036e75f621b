import ECV
import ECVProtocol
import ECVService
import Foundation
import GLibCore
import MediaTestSupport

/// Calls whose whole path crosses a `NetworkLab`, signaling included: the reference service on the
/// lab's host address, an `ecv agent` bot inside the lab (its HTTP requests, agent socket, room
/// joins, collider socket and media all cross the impaired veth pair), and ECV callers here that
/// dial it through the SDK (their REST and queue traffic stays on this side; their media crosses).
package final class ServiceLab: Sendable {
    package let lab: NetworkLab
    package let service: ReferenceService
    package let base: String
    private let bot: Process
    private let botOutput = Locked<[String]>([])

    /// What one call did: seconds from dialing to AgentConnected and to WebRtcConnected, or why not.
    package struct CallResult: Sendable {
        package var agentConnectedAfter: Double?
        package var connectedAfter: Double?
        package var failure: String?
    }

    /// Starts the service and the bot (with the path clean: impair it afterwards) and returns once
    /// the bot is ready.
    package static func start(lab: NetworkLab) async throws -> ServiceLab {
        var configuration = ReferenceServiceConfiguration()
        configuration.iceServers = [ECVProtocol.ICEServer(urls: ["stun:127.0.0.1:3478"])]
        configuration.acd.queueEntryDelay = 0
        configuration.openAgents = true
        let service = try ReferenceService(configuration: configuration)
        let url = try await service.start(host: lab.hostAddress, port: 0)
        let serviceLab = try ServiceLab(lab: lab, service: service, base: url.absoluteString.trimmingCharacters(in: CharacterSet(charactersIn: "/")))
        let deadline = ContinuousClock.now + .seconds(30)
        while !serviceLab.botOutput.value.contains(where: { $0.contains("\"event\":\"ready\"") }) {
            guard ContinuousClock.now < deadline, serviceLab.bot.isRunning else {
                await serviceLab.close()
                throw LabError(command: "ecv agent", message: "the bot in the lab was not ready: \(serviceLab.botOutput.value.suffix(5))")
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        return serviceLab
    }

    private init(lab: NetworkLab, service: ReferenceService, base: String) throws {
        self.lab = lab
        self.service = service
        self.base = base
        bot = lab.process(BuiltExecutable.url(named: "ecv"),
                          ["agent", "--service-url", base, "--name", "Lab Bot", "--json", "--receive-only", "--width", "320", "--height", "240",
                           "--no-audio-processing"])
        let output = Pipe()
        bot.standardOutput = output
        bot.standardError = output
        try bot.run()
        let lines = botOutput
        LineReader.start(output.fileHandleForReading.fileDescriptor, { line in lines.withLock { $0.append(line) } }, finished: {})
    }

    /// The bot's output so far (one JSON object per line), for a failure's message.
    package var botTranscript: [String] { botOutput.value }

    /// Dials the bot as an SDK caller, connects as soon as the agent does, and waits for
    /// WebRtcConnected (or the call's end, or `timeout`), then hangs up and waits for the end.
    /// `connectionTimeoutMs`: the caller's `ConnectParameters.connectionTimeout` (the SDK's 10 s
    /// by default), the deadline within which the bot's retried joins and connects must land.
    package func call(timeout: Duration = .seconds(30), connectionTimeoutMs: Int = 10_000) async -> CallResult {
        var result = CallResult()
        let sdk: ECVSdk
        do {
            sdk = try ECVSdk(config: ECVSdkConfiguration(name: "lab caller", serviceUrl: base, iceServers: [ICEServer(urls: ["stun:127.0.0.1:3478"])]))
        } catch {
            result.failure = "\(error)"
            return result
        }
        guard let call = await sdk.createVideoCall() else {
            result.failure = "no call"
            return result
        }
        let events = call.events()
        let started = ContinuousClock.now
        let seconds = { (ContinuousClock.now - started).seconds }
        Task { await call.start(dialCallParameters: DialCallParameters(callerName: "Lab caller")) }
        let watchdog = Task {
            try await Task.sleep(for: timeout)
            call.hangup()
        }
        for await event in events {
            switch event.type {
            case .AgentConnected:
                result.agentConnectedAfter = seconds()
                guard let connection = call.connect(parameters: ConnectParameters(connectionTimeout: connectionTimeoutMs, videoWidth: 320, videoHeight: 240,
                                                                                     noAudioProcessing: true)) else {
                    result.failure = "connect() returned nil"
                    call.hangup()
                    continue
                }
                Task { await connection.startRoom() }
            case .WebRtcConnected:
                result.connectedAfter = result.connectedAfter ?? seconds()
                call.hangup()
            case .Error where result.connectedAfter == nil:
                result.failure = (result.failure.map { $0 + "; " } ?? "") + (event.detail ?? "\(event)")
            case .CallEnded:
                if result.connectedAfter == nil, result.failure == nil {
                    result.failure = "ended before WebRtcConnected after \(String(format: "%.1f", seconds())) s: \(event.detail ?? "")"
                }
                watchdog.cancel()
                return result
            default:
                break
            }
        }
        watchdog.cancel()
        return result
    }

    /// Stops the bot (SIGTERM: it logs out) and the service.
    package func close() async {
        if bot.isRunning { kill(bot.processIdentifier, SIGTERM) }
        let deadline = ContinuousClock.now + .seconds(5)
        while bot.isRunning, ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(20)) } // polling a child's exit
        if bot.isRunning { kill(bot.processIdentifier, SIGKILL) }
        await service.stop()
    }
}
