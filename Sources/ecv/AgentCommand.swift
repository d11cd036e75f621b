import ECV
import ECVAgent
import ECVProtocol
import Foundation
import GLibCore
import GStreamer

/// `ecv agent`: a headless agent bot that answers calls, optionally records them and runs a script.
enum AgentCommand {
    static let usage = """
        ecv agent [options]      run a headless agent bot
          --service-url URL        the ECV service (required)
          --name NAME              agent name shown to callers (default "Agent Bot")
          --secret S               agent secret, when the service requires one
          --pin PIN                pin the service's TLS certificate: sha256/<base64 SPKI>, 64 hex digits,
                                   a .der/.pem file or Base64 DER (repeatable; a malformed pin is an error)
          --signaling-pin PIN      pins for the rooms and collider (default: the --pin list)
          --ca-file FILE           PEM CA certificates trusted instead of the system store
          --queue NAME             queue to work (repeatable; default: the service's default queue)
          --ice-server URL         ICE server (repeatable; default stun:127.0.0.1:3478, as ecv serve advertises none)
          --record DIR             record every call to DIR/<rtcId>.mkv (DIR is made if its parent exists)
          --record-layout tracks|pip   separate tracks as sent (default), or one picture: the caller
                                   full-frame, this bot inset (re-encoded)
          --script "STEPS"         actions per call, e.g. "hold 2s, pickup, flash on, take photo,
                                   transfer Billing, hangup after 20s"; identity verification: "ocr retry,
                                   face retry, verdict APPROVED \"documents match\"" (docs/protocol.md §4.1, §7)
          --voice                  speak and listen (espeak-ng, pocketsphinx): `say` in the script is speech,
                                   `listen` and `on "WORDS" STEP` act on what the caller says; without --script
                                   the bot greets, listens and transfers to Billing, holds or says goodbye
          --calls N                exit after N calls (default: run until Ctrl-C)
          --receive-only           send no media (a recording bot)
          --jitter-buffer-ms MS    how long the jitter buffers wait for late packets (default 100; a bot that
                                   records without decoding can wait 1000, so a busy host's delays leave no holes)
          --serves-accessibility   be offered callers with hearing or visual impairment before other agents are
          --json                   one JSON object per line, nothing else
        \(MediaOptions.help)
        \(LogOptions.help)
          Exits 0 after Ctrl-C, SIGTERM or --calls; 1 when the service drops the agent socket (it has
          logged the agent out then) or a recording was not written.
        """

    static let spec = OptionSpec(values: ["service-url", "name", "secret", "pin", "signaling-pin", "ca-file", "queue", "ice-server", "record",
                                          "record-layout", "script", "calls", "jitter-buffer-ms"],
                                 flags: ["json", "receive-only", "serves-accessibility", "voice"]) + MediaOptions.spec + LogOptions.spec

    /// The default ICE server of `ecv call`, `ecv agent` and `ecv kyc`: `ecv serve` advertises
    /// none unless told, and the SDK needs one (loopback and LAN calls use host candidates).
    static let defaultICEServer = "stun:127.0.0.1:3478"

    static func run(_ words: [String]) async throws(CLIError) {
        var arguments = try Arguments(words, spec)
        guard let serviceUrl = arguments.value("service-url") else { throw .usage("--service-url URL is required") }
        let parameters = try MediaOptions.parameters(&arguments)
        let video = MediaOptions.video(&arguments, default: .testPattern(pattern: "ball"))
        let audio = MediaOptions.audio(&arguments, default: .testTone(frequency: 660))
        let record = arguments.path("record")
        let layout: RecordingLayout
        switch arguments.value("record-layout") ?? "tracks" {
        case "tracks": layout = .separateTracks
        case "pip": layout = .pictureInPicture
        case let other: throw .usage("--record-layout takes tracks or pip, not '\(other)'")
        }
        let voiced = arguments.flag("voice")
        let script: AgentScript?
        do {
            script = try (arguments.value("script") ?? (voiced ? VoiceBot.defaultScript : nil)).map { text throws(AgentScriptError) in try AgentScript(text) }
        } catch {
            throw .usage(error.description)
        }
        try arguments.exclusive("voice", "receive-only", because: "a bot that speaks sends audio")
        let maxCalls = try arguments.int("calls")
        if let maxCalls, maxCalls < 1 { throw .usage("--calls takes a number above 0, not \(maxCalls)") }
        let json = arguments.flag("json"), receiveOnly = arguments.flag("receive-only")
        var configuration = AgentBotConfiguration(serviceUrl: serviceUrl, name: arguments.value("name") ?? "Agent Bot",
                                                  secret: arguments.value("secret"), queues: arguments.values("queue"),
                                                  parameters: parameters, video: .single(video), audio: audio,
                                                  receiveVideo: record != nil ? .passthrough(name: "caller_video") : .renderer(name: "caller_video"))
        if configuration.queues.isEmpty { configuration.queues = ["default"] }
        let voice = try script.flatMap { script throws(CLIError) in voiced ? try VoiceBot.voice(for: script) : nil }
        if voiced { configuration.parameters.media.applicationAudio = true }
        configuration.pinnedCertificates = arguments.values("pin")
        configuration.signalingPinnedCertificates = arguments.values("signaling-pin")
        configuration.trustedCAFile = arguments.path("ca-file")
        configuration.iceServers = (arguments.values("ice-server").nilIfEmpty ?? [defaultICEServer]).map { ICEServer(urls: [$0]) }
        configuration.sendsMedia = !receiveOnly
        configuration.servesAccessibility = arguments.flag("serves-accessibility")
        if let latency = try arguments.int("jitter-buffer-ms") {
            guard (0...10_000).contains(latency) else { throw .usage("--jitter-buffer-ms takes 0…10000, not \(latency)") }
            configuration.jitterBufferLatencyMs = latency
        }
        try arguments.exclusive("receive-only", "source", because: "a receive-only bot sends no video")
        let logging = try LogOptions.read(&arguments)
        try arguments.finish()
        var decisions: [String] = []
        if !receiveOnly { decisions = try MediaOptions.check(parameters, video: video, audio: configuration.audio) }
        if let record { try RecordingTarget.directory(record) }

        LogOptions.install(logging)
        for decision in decisions { Logger.info("media: \(decision)") }
        Interrupts.install()
        let bot: AgentBot
        do { bot = try AgentBot(configuration: configuration) } catch { throw .usage(error.description) }
        let events = bot.events()
        do {
            try await bot.connect()
            try await bot.ready()
        } catch {
            throw .failed("\(error)")
        }
        report(json, ["event": "ready", "agentId": bot.agentId ?? "?", "queues": configuration.queues])
        // Set before every logout of our own (Ctrl-C, SIGTERM, --calls reached): the events end
        // then, and that is success. Events ending any other way mean the service dropped us.
        let stopping = Locked(false)
        let interrupt = Task {
            await Interrupts.wait()
            stopping.withLock { $0 = true }
            await bot.logout()
        }
        var handled = 0
        var lost: String?
        var calls: [Task<String?, Never>] = []
        for await event in events {
            switch event {
            case .offered(let offer):
                report(json, ["event": "offered", "rtcId": offer.rtcId, "caller": offer.callerName, "queue": offer.queue,
                              "attributes": offer.attributes])
            case .callStarted(let call):
                calls.append(Task { await handle(call, record: record, layout: layout, script: script, voice: voice, json: json) })
            case .callEnded(let rtcId, let reason):
                report(json, ["event": "callEnded", "rtcId": rtcId, "reason": reason.rawValue])
                handled += 1
                if let maxCalls, handled >= maxCalls {
                    stopping.withLock { $0 = true }
                    await bot.logout()
                }
            case .error(let message):
                report(json, ["event": "error", "message": message])
            case .disconnected(let code, let reason):
                report(json, ["event": "disconnected", "code": Int(code), "reason": reason])
                if !stopping.value { lost = "\(code) \(LogText.sanitized(reason, limit: 200))" }
            case .state, .offerWithdrawn:
                continue
            }
        }
        interrupt.cancel()
        if !stopping.value {
            // The agent socket dropped (the service closed it, went away, or the network did):
            // the service has logged this agent out, so a supervisor must see a failure.
            throw .failed("the agent socket closed unexpectedly (\(lost ?? "no close frame")); the service logged this agent out")
        }
        var problems: [String] = []
        for call in calls { if let problem = await call.value { problems.append(problem) } }
        if !problems.isEmpty {
            throw .failed("\(problems.count) call(s) failed: " + problems.joined(separator: "; "))
        }
    }

    /// Follows one call to its end; returns why it counts as failed (media it negotiated never
    /// flowed, no codec in common, its recording not written), else nil.
    @discardableResult
    static func handle(_ call: AgentCall, record: String?, layout: RecordingLayout, script: AgentScript?, voice: AgentVoice? = nil,
                       json: Bool) async -> String? {
        let events = call.events()
        var opened = false
        var problems: [String] = []
        var file: String?
        var failure: String?
        for await event in events {
            if json {
                // `what`: the event's name (its values are in `text`), not a Swift dump of its payload.
                NDJSON.emit(["event": "call", "rtcId": call.rtcId, "what": String(String(describing: event).prefix { $0 != "(" }), "text": sentence(event)])
            } else {
                say("agent: call \(call.rtcId): \(sentence(event))")
            }
            switch event {
            case .mediaSilent(let kind, let direction, everCarried: false): problems.append("no \(kind) \(direction)")
            case .noCommonCodec(let kind, _, _): problems.append("no \(kind) codec in common")
            case .recordingFailed(let reason) where failure == nil: failure = reason
            default: break
            }
            if case .connected = event, let record, !call.isRecording {
                let url = URL(fileURLWithPath: record).appendingPathComponent("\(call.rtcId).mkv")
                file = url.path
                do { try await call.startRecording(to: url, layout: layout) } catch {
                    failure = "\(error)"
                    report(json, ["event": "error", "rtcId": call.rtcId, "message": "recording: \(error)"])
                }
            }
            if case .textChannelOpen = event, !opened, let script {
                opened = true
                Task { await script.run(on: call, voice: voice) { step in report(json, ["event": "script", "rtcId": call.rtcId, "step": step]) } }
            }
        }
        // The call is over and its recording finalised (or not): a file the run asked for counts
        // only when it was written, so a lost one is said and fails the run.
        if let file {
            if failure == nil, !RecordingTarget.written(file) { failure = "nothing was written" }
            if let failure {
                problems.append("the recording \(file) was not written: \(failure)")
                report(json, ["event": "error", "rtcId": call.rtcId, "message": "the recording \(file) was not written: \(failure)"])
            } else {
                report(json, ["event": "recording", "rtcId": call.rtcId, "file": file])
            }
        }
        return problems.isEmpty ? nil : "call \(call.rtcId): " + problems.joined(separator: ", ")
    }

    /// A bot event as JSON, or as a sentence for a person.
    static func report(_ json: Bool, _ fields: [String: any Sendable]) {
        if json { NDJSON.emit(fields); return }
        let text = { (key: String) in fields[key].map { "\($0)" } ?? "?" }
        switch text("event") {
        case "ready": say("agent: ready as \(text("agentId")) on \((fields["queues"] as? [String])?.joined(separator: ", ") ?? "?")")
        case "offered":
            let attributes = (fields["attributes"] as? [String: String]).map { $0.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" } } ?? []
            say("agent: offered call \(text("rtcId")) from \(text("caller")) on \(text("queue"))"
                + (attributes.isEmpty ? "" : " (\(attributes.joined(separator: ", ")))"))
        case "callEnded": say("agent: call \(text("rtcId")) ended: \(text("reason"))")
        case "disconnected": say("agent: the agent socket closed (\(text("code")) \(text("reason")))")
        case "script": say("agent: call \(text("rtcId")): script: \(text("step"))")
        case "recording": say("agent: call \(text("rtcId")): recorded to \(text("file"))")
        default: say("agent: error: \(text("message"))")
        }
    }

    /// What happened in a call, as a sentence.
    static func sentence(_ event: AgentCallEvent) -> String {
        switch event {
        case .joinedRoom(let initiator): "joined the room (\(initiator ? "this bot offers" : "the caller offers"))"
        case .connected: "media connected"
        case .disconnected: "media disconnected"
        case .remoteStream(let kind, let codec): "receiving the caller's \(kind) (\(codec))"
        case .textChannelOpen: "the text channel is open"
        case .callerStatus(let media, let muted): "the caller \(muted ? "muted" : "unmuted") \(media.rawValue.lowercased())"
        case .flashReply(let turningOn, let approval): "the caller answered the flash-\(turningOn ? "on" : "off") request: \(approval.rawValue)"
        case .text(let text): "the caller wrote: \(text)"
        case .transferPending(let target): "transferring to \(target)"
        case .transferCancelled(let reason): "the transfer was cancelled: \(reason)"
        case .transferCompleted(let newRtcId): "transferred; the caller goes on as \(newRtcId)"
        case .recordingFailed(let reason): "the recording failed: \(reason)"
        case .noCommonCodec(let kind, let ours, let theirs):
            "no common \(kind) codec (this bot: \(ours.joined(separator: ", ")); the caller: \(theirs.joined(separator: ", ")))"
        case .mediaSilent(let kind, let direction, let everCarried):
            "no \(kind) \(direction) for 5 s" + (everCarried ? "" : ", and none at all so far")
        case .bandwidthChanged(let target, let estimate, let reason): "now sending \(target) kbit/s (estimate \(estimate) kbit/s): \(reason)"
        case .ended(let reason): "ended: \(reason)"
        }
    }
}

extension Array {
    /// nil for an empty array: `values.nilIfEmpty ?? defaults`.
    var nilIfEmpty: Self? { isEmpty ? nil : self }
}
