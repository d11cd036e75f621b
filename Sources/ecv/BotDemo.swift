import ECV
import ECVAgent
import ECVProtocol
import ECVService
import ECVSpeech
import Foundation
import GLibCore

/// `ecv demo --bot`: a caller talks to a voice bot. The reference service and the bot (Ava, on
/// "default", with espeak-ng and pocketsphinx) run in this process with a caller whose voice is
/// espeak-ng too: Ava greets, the caller asks for billing, Ava says so and transfers the call.
/// The summary lists what each side said and heard, with times.
final class BotDemo: Sendable {
    static let botScript = "say Hello and thank you for calling. How can I help you, listen 15s, "
        + "on \"billing\" say Please hold while I transfer you to billing, on \"billing\" transfer Billing, "
        + "otherwise say Sorry I did not understand. Goodbye, otherwise hangup"
    static let callerLine = "I want billing please"

    let printer: CallPrinter
    /// (seconds since the start, who, what).
    private let lines = Locked<[(at: Double, who: String, text: String)]>([])

    init(json: Bool) { printer = CallPrinter(json: json) }

    func note(_ who: String, _ text: String) {
        let at = printer.elapsed
        lines.withLock { $0.append((at, who, text)) }
        if printer.json {
            NDJSON.emit(["t": (at * 1000).rounded() / 1000, "event": "note", "who": who, "text": text])
        } else {
            say(String(format: "%6.2fs  %@: %@", at, who, text))
        }
    }

    func run() async throws(CLIError) {
        do {
            try await play()
        } catch let error as CLIError {
            throw error
        } catch {
            throw .failed("\(error)")
        }
    }

    private func play() async throws {
        var configuration = ReferenceServiceConfiguration()
        configuration.queues = ["default", "Billing"]
        configuration.openAgents = true
        configuration.iceServers = [ECVProtocol.ICEServer(urls: ["stun:127.0.0.1:3478"])]
        let service = try ReferenceService(configuration: configuration)
        let base = try await service.start(host: "127.0.0.1", port: 0).absoluteString.trimmingCharacters(in: CharacterSet(charactersIn: "/"))
        var parameters = ConnectParameters(videoCallEnabled: false, noAudioProcessing: true)
        parameters.media.applicationAudio = true
        let bot = try await startBot(base, parameters: parameters)
        note("demo", "reference service on \(base); Ava (a voice bot) answers the default queue")

        let sdk = try ECVSdk(config: ECVSdkConfiguration(name: "bot-demo", serviceUrl: base, iceServers: [ICEServer(urls: ["stun:127.0.0.1:3478"])]))
        guard let call = await sdk.createVideoCall() else { throw CLIError.failed("no call") }
        let events = call.events()
        await call.start(dialCallParameters: DialCallParameters(callerName: "Demo Caller", queue: "default"))
        guard await call.agentConnected?.value == true else { throw CLIError.failed("no agent answered (\(call.lastError))") }
        guard let connection = call.connect(parameters: parameters) else { throw CLIError.failed("\(call.lastError)") }
        // The caller's microphone is quiet: its voice is what it plays (a test tone would be speech to the bot).
        connection.audioSource = .silence
        await connection.startRoom()
        let voice = try ESpeakSynthesizer(voice: "en-us+f3")
        let heard = try await listen(on: connection)
        var transferred = false
        // The caller answers once it has heard Ava's greeting.
        let transcripts = Task { () -> Void in
            var answered = false
            for await event in heard {
                guard case .transcript(let transcript) = event, transcript.isFinal else { continue }
                self.note("caller heard", "\"\(transcript.text)\"")
                if !answered {
                    answered = true
                    self.note("caller says", "\"\(Self.callerLine)\"")
                    do throws(AppMediaError) { _ = try await connection.say(Self.callerLine, with: voice) } catch { self.note("caller", "\(error)") }
                }
            }
        }
        let timeout = Task {
            try await Task.sleep(for: .seconds(60))
            self.note("demo", "no transfer within 60 s")
            call.hangup()
        }
        for await event in events {
            if event.type == .TransferCompleted { transferred = true; break }
            if event.type == .CallEnded { break }
        }
        timeout.cancel()
        // Ava's last words reach the caller's ears a hangover after she stops: wait for them, bounded.
        let deadline = ContinuousClock.now + .seconds(4)
        while lines.value.filter({ $0.who == "caller heard" }).count < 2, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
        }
        transcripts.cancel()
        await bot.logout()
        call.hangup()
        await service.stop()
        summary(transferred: transferred)
        guard transferred else { throw CLIError.failed("the bot did not transfer the call to Billing as scripted") }
    }

    /// The caller's ears: pocketsphinx with the bot's sentences as phrases.
    private func listen(on connection: WebRtcConnection) async throws -> AsyncStream<Heard> {
        let phrases = Self.botScript.split(separator: ",").compactMap { step -> [String]? in
            let text = step.trimmingCharacters(in: .whitespaces)
            guard let range = text.range(of: "say ") else { return nil }
            return text[range.upperBound...].split(whereSeparator: { ".?!".contains($0) })
                .map { $0.lowercased().trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        }.flatMap { $0 }
        let transcriber = try PocketSphinxTranscriber(vocabulary: .phrases(phrases))
        // The media starts shortly after the room: wait for it, bounded.
        let deadline = ContinuousClock.now + .seconds(15)
        while connection.mediaEndpoint.peer == nil, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
        }
        return try await connection.listen(with: transcriber)
    }

    private func startBot(_ base: String, parameters: ConnectParameters) async throws -> AgentBot {
        var configuration = AgentBotConfiguration(serviceUrl: base, name: "Ava", queues: ["default"], parameters: parameters,
                                                  video: .single(.testPattern()), audio: .silence)
        configuration.iceServers = [ICEServer(urls: ["stun:127.0.0.1:3478"])]
        let bot = try AgentBot(configuration: configuration)
        try await bot.connect()
        try await bot.ready()
        let script = try AgentScript(Self.botScript)
        let voice = try VoiceBot.voice(for: script)
        let events = bot.events()
        Task { [weak self] in
            for await case .callStarted(let call) in events {
                let demo = self
                Task {
                    for await event in call.events() where event == .textChannelOpen {
                        await script.run(on: call, voice: voice) { step in demo?.note("Ava", step) }
                    }
                }
            }
        }
        return bot
    }

    private func summary(transferred: Bool) {
        let all = lines.value.filter { $0.who != "demo" }
        if printer.json {
            NDJSON.emit(["event": "summary", "transferred": transferred,
                         "transcript": all.map { ["t": ($0.at * 1000).rounded() / 1000, "who": $0.who, "text": $0.text] as [String: any Sendable] }])
            return
        }
        say("")
        say("Bot demo summary (transferred to Billing: \(transferred ? "yes" : "no"))")
        for line in all { say(String(format: "  %6.2fs  %-13@ %@", line.at, line.who, line.text)) }
    }
}
