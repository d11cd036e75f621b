import ECV
import ECVAgent
import ECVProtocol
import ECVService
import EnQualify
import Foundation

/// `ecv demo --kyc`: a whole identity-verification call on this machine. The reference service
/// with its back office, a verification agent bot and an EnQualify customer run in this process
/// on loopback. The agent asks for the torch on (the user approves) and off (the user refuses),
/// asks to repeat the OCR and the face steps, posts the verdict and hangs up; the closing summary
/// lists every delegate call in order.
enum KycDemo {
    static let agentScript = "wait 1s, flash on, wait 1s, flash off, wait 1s, ocr retry, wait 1s, face retry, wait 1s, "
        + "verdict APPROVED \"documents and face match\", hangup after 1s"

    static func run(json: Bool) async throws(CLIError) {
        let printer = CallPrinter(json: json)
        let apiKey = "demo-\(UUID().uuidString.prefix(8))"
        var configuration = ReferenceServiceConfiguration()
        configuration.openAgents = true // its own bot on loopback
        configuration.iceServers = [ECVProtocol.ICEServer(urls: ["stun:127.0.0.1:3478"])]
        configuration.verification = VerificationBackOfficeConfiguration(apiKeys: [apiKey])
        let service: ReferenceService
        let base: String
        do {
            service = try ReferenceService(configuration: configuration)
            base = try await service.start(host: "127.0.0.1", port: 0).absoluteString.trimmingCharacters(in: CharacterSet(charactersIn: "/"))
        } catch {
            throw .failed("cannot start the reference service: \(error)")
        }
        let note: @Sendable (String) -> Void = { text in
            if json {
                NDJSON.emit(["t": (printer.elapsed * 1000).rounded() / 1000, "event": "note", "text": text])
            } else {
                say(String(format: "%6.2fs  ", printer.elapsed) + text)
            }
        }
        note("reference service and verification back office on \(base)")
        let bot: AgentBot
        do { bot = try await agent(base, note: note) } catch {
            await service.stop()
            throw .failed("the verification agent could not start: \(error)")
        }
        note("verification agent ready: \(agentScript)")

        let customer = KycCustomer(printer: printer, approvesTorch: { $0 == .flashOpen }, retriesPass: true)
        customer.call.torch = PrintedTorch(json: json)
        let session = SessionModelVideoCall(callType: "NewCustomer", userName: "Enqura", surname: "Information", phone: "+905551234567",
                                            email: "enqualifyplus@enqura.com", identityType: "ID Card", identityNo: "12345678901",
                                            reference: "REF123456", canAutoClose: true)
        let succeeded = await customer.run(sessionModel: session, baseModel: BaseModelVideoCall(baseURL: base, locale: "TR", mobileUser: "mobile",
                                                                                                countryCode: "TUR", apiKey: apiKey),
                                           hearing: true, visually: false)
        await bot.logout()
        await service.stop()
        if !json {
            say("")
            say("KYC demo summary")
        }
        KycCommand.printSummary(customer, json: json)
        if !succeeded { throw .failed(customer.failure ?? "the verification call did not complete") }
    }

    private static func agent(_ base: String, note: @escaping @Sendable (String) -> Void) async throws -> AgentBot {
        var configuration = AgentBotConfiguration(serviceUrl: base, name: "Verifier", queues: ["default"],
                                                  parameters: ConnectParameters(videoWidth: 640, videoHeight: 480, noAudioProcessing: true),
                                                  video: .single(.testPattern(pattern: "ball")))
        configuration.iceServers = [ICEServer(urls: ["stun:127.0.0.1:3478"])]
        let bot = try AgentBot(configuration: configuration)
        try await bot.connect()
        try await bot.ready()
        let steps = try AgentScript(agentScript)
        let events = bot.events()
        Task {
            for await case .callStarted(let call) in events {
                Task {
                    for await event in call.events() where event == .textChannelOpen {
                        await steps.run(on: call) { step in note("agent     \(step)") }
                    }
                }
            }
        }
        return bot
    }
}
