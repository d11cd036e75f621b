import ECV
import ECVAgent
import ECVProtocol
import ECVService
import ECVTestSupport
import Synchronization
import Testing

/// Secrets planted in credentials, headers and payloads never reach a log line, at any level:
/// neither the service's event log nor the SDK's logger.
@Suite(.serialized) struct SecretHygieneTests {
    @Test func noTokenOrSecretReachesAnyLogLine() async throws {
        let agentSecret = "AGENT-SECRET-5f1c9e"
        let wrongSecret = "WRONG-SECRET-77aa01"
        let headerSecret = "HEADER-SECRET-c0ffee"
        let lines = Mutex<[String]>([])
        Logger.setLevel(logLevel: .debug)
        Logger.setHandler { level, message in lines.withLock { $0.append("\(level) \(message)") } }
        defer {
            Logger.resetHandler()
            Logger.setLevel(logLevel: .info)
        }
        let serviceLines = Mutex<[String]>([])
        let backend = try await Backend.start { configuration in
            configuration.agentSecrets = [agentSecret]
            configuration.openAgents = false
            configuration.logHandler = { entry in serviceLines.withLock { $0.append(entry.description) } }
        }
        let intruder = try AgentBot(configuration: AgentBotConfiguration(serviceUrl: backend.url, name: "Mallory", secret: wrongSecret))
        await #expect(throws: AgentBotError.self) { try await intruder.connect() }
        let agent = try await backend.agent { $0.secret = agentSecret }
        let sdk = try backend.sdk()
        let log = EventLog(sdk)
        let call = try await placeCall(sdk, log: log, parameters: DialCallParameters(
            callerName: "Jane", additionalHeaders: ["X-Auth-Token": headerSecret]))
        _ = try await log.wait(for: .WebRtcConnected, call.rtcId)
        let callerToken = try #require(call.callerToken)
        call.hangup()
        _ = try await log.wait(for: .CallEnded, call.rtcId)
        await agent.logout()
        await backend.close()

        let secrets = [agentSecret, wrongSecret, headerSecret, callerToken]
        let everything = lines.withLock { $0 } + serviceLines.withLock { $0 } + backend.service.log.entries.map(\.description)
        #expect(everything.count > 20, "the scenario logged: \(everything.count) lines")
        for secret in secrets {
            let leaking = everything.filter { $0.contains(secret) }
            #expect(leaking.isEmpty, "\(secret.prefix(6))… leaked: \(leaking.prefix(3))")
        }
    }
}
