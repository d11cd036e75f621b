import ECV
import ECVAgent
import ECVProtocol
import ECVRecording
import ECVService
import Foundation
import GLibCore
import GStreamer
import MediaRuntime

/// `ecv demo`: a whole contact-center call on this machine, with no server to set up.
///
/// The reference service, two agent bots (Alice on "default", Bob on "Billing") and a caller run in
/// this process on loopback with test sources. Alice's script exercises hold/pickup, flash (approved
/// by the caller's torch handler), take-photo (camera switch) and transfers the call to Billing after
/// the caller muted and unmuted; the caller re-queues with the new rtcId without a second DialEx, and
/// Bob hangs up. Both legs are recorded; a summary closes the run.
enum DemoCommand {
    static let usage = """
        ecv demo [options]       a whole call on this machine: service, agents and caller, recorded
          --recordings DIR         where recordings go (default ./recordings)
          --codec VP8|VP9|H264     video codec (default VP8)
          --json                   one JSON object per line (events, then the summary), nothing else
          --kyc                    an identity-verification call instead (EnQualify: torch, OCR/face retry, verdict)
          --peer                   the SkyWay peer model instead: two peers on the embedded PeerJS server find
                                   each other, call, exchange data, switch camera, record, hang up
          --bot                    a voice bot instead: Ava greets the caller by voice (espeak-ng), hears the
                                   caller ask for billing (pocketsphinx) and transfers the call; the summary
                                   lists what each side said and heard, with times
        \(LogOptions.help)
          Exits 1 when a leg did not run as scripted.
        """

    static let spec = OptionSpec(values: ["recordings", "codec"], flags: ["json", "kyc", "peer", "bot"]) + LogOptions.spec

    static func run(_ words: [String]) async throws(CLIError) {
        var arguments = try Arguments(words, spec)
        try arguments.exclusive("kyc", "peer", because: "each is a demo of its own")
        try arguments.exclusive("kyc", "codec", because: "the identity-verification demo sends VP8")
        try arguments.exclusive("kyc", "recordings", because: "the identity-verification demo records nothing")
        try arguments.exclusive("bot", "kyc", because: "each is a demo of its own")
        try arguments.exclusive("bot", "peer", because: "each is a demo of its own")
        let json = arguments.flag("json"), peer = arguments.flag("peer")
        if arguments.flag("bot") {
            try LogOptions.apply(&arguments)
            try arguments.finish()
            return try await BotDemo(json: json).run()
        }
        if arguments.flag("kyc") {
            try LogOptions.apply(&arguments)
            try arguments.finish()
            try WarmUp.now(videoCodec: "VP8")
            return try await KycDemo.run(json: json)
        }
        let directory = URL(fileURLWithPath: arguments.path("recordings") ?? Arguments.absolute("recordings"))
        let codec = (arguments.value("codec") ?? "VP8").uppercased()
        guard ["VP8", "VP9", "H264"].contains(codec) else { throw .usage("--codec takes VP8, VP9 or H264, not '\(codec)'") }
        try LogOptions.apply(&arguments)
        try arguments.finish()
        do { try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true) } catch {
            throw .failed("cannot create \(directory.path): \(error.localizedDescription)")
        }
        try WarmUp.now(videoCodec: codec)
        if peer { try await PeerDemo.run(directory: directory, codec: codec, json: json); return }
        let demo = Demo(directory: directory, codec: codec, json: json)
        do { try await demo.run() } catch let error as CLIError { throw error } catch { throw .failed("\(error)") }
    }
}

/// The caller's torch in the demo: approves every request and says so.
struct DemoTorch: FlashlightHandler {
    func approve(turningOn: Bool) async -> Bool { true }
    func setTorch(on: Bool) async -> Bool { true }
}

final class Demo: Sendable {
    let directory: URL
    let codec: String
    let printer: CallPrinter
    private let recordings = Locked<[(leg: Int, url: URL, connectedAt: Double, endedAt: Double?)]>([])

    init(directory: URL, codec: String, json: Bool) {
        self.directory = directory
        self.codec = codec
        printer = CallPrinter(json: json)
    }

    func note(_ text: String) {
        if printer.json {
            NDJSON.emit(["t": (printer.elapsed * 1000).rounded() / 1000, "event": "note", "text": text])
        } else {
            say(String(format: "%6.2fs  ", printer.elapsed) + text)
        }
    }

    func run() async throws {
        var configuration = ReferenceServiceConfiguration()
        configuration.queues = ["default", "Billing"]
        configuration.openAgents = true // its own two bots on loopback
        configuration.iceServers = [ECVProtocol.ICEServer(urls: ["stun:127.0.0.1:3478"])]
        let service = try ReferenceService(configuration: configuration)
        let base = try await service.start(host: "127.0.0.1", port: 0).absoluteString.trimmingCharacters(in: CharacterSet(charactersIn: "/"))
        note("reference service on \(base) (queues: default, Billing)")
        let parameters = ConnectParameters(videoWidth: 640, videoHeight: 480, videoCodec: codec, noAudioProcessing: true)
        let alice = try await agent(base, name: "Alice", queue: "default", parameters: parameters,
                                    script: "wait 2s, hold 2s, pickup, wait 1s, flash on, wait 1s, flash off, take photo, wait 4s, transfer Billing")
        let bob = try await agent(base, name: "Bob", queue: "Billing", parameters: parameters, script: "wait 4s, hangup")
        note("agents Alice (default) and Bob (Billing) are ready")

        let sdk = try ECVSdk(config: ECVSdkConfiguration(name: "demo", serviceUrl: base, iceServers: [ICEServer(urls: ["stun:127.0.0.1:3478"])]))
        sdk.modules.onCallEvent.append { [printer] call, event, _ in printer.event(call, event) }
        guard let first = await sdk.createVideoCall() else { throw CLIError.failed("no call") }
        await first.start(dialCallParameters: DialCallParameters(callerName: "Demo Caller", attributes: ["video_language": "en"],
                                                                 queue: "default"))
        let transferredTo = try await leg(1, first, parameters: parameters, muteDuringCall: true)
        guard let newRtcId = transferredTo else { throw CLIError.failed("the call was not transferred as scripted") }

        // Turkish guide §7.1: the transferred leg is a new call object, never dialed again.
        guard let second = await sdk.createVideoCall(rtcId: newRtcId) else { throw CLIError.failed("no call for \(newRtcId)") }
        second.isDialed = true
        guard await second.createQueueSocket() else { throw CLIError.failed("cannot wait for the transferred leg: \(second.lastError)") }
        _ = try await leg(2, second, parameters: parameters, muteDuringCall: false)

        let dials = service.script.dialCount(rtcId: newRtcId)
        await alice.logout()
        await bob.logout()
        await service.stop()
        try await summary(first: first.rtcId, second: newRtcId, secondLegDials: dials)
    }

    private func agent(_ base: String, name: String, queue: String, parameters: ConnectParameters, script: String) async throws -> AgentBot {
        var configuration = AgentBotConfiguration(serviceUrl: base, name: name, queues: [queue], parameters: parameters,
                                                  video: .single(.testPattern(pattern: name == "Alice" ? "ball" : "pinwheel")))
        configuration.iceServers = [ICEServer(urls: ["stun:127.0.0.1:3478"])]
        let bot = try AgentBot(configuration: configuration)
        try await bot.connect()
        try await bot.ready()
        let steps = try AgentScript(script)
        let events = bot.events()
        Task { [weak self] in
            for await case .callStarted(let call) in events {
                let demo = self
                Task {
                    for await event in call.events() where event == .textChannelOpen {
                        await steps.run(on: call) { step in demo?.note("\(name): \(step)") }
                    }
                }
            }
        }
        return bot
    }

    /// One leg: wait for the agent, connect, record, optionally mute for a moment; returns the
    /// new rtcId when the leg ended in a transfer.
    private func leg(_ number: Int, _ call: VideoCall, parameters: ConnectParameters, muteDuringCall: Bool) async throws -> String? {
        let events = call.events()
        guard await call.agentConnected?.value == true else { throw CLIError.failed("leg \(number): no agent (\(call.lastError))") }
        guard let connection = call.connect(parameters: parameters) else { throw CLIError.failed("leg \(number): \(call.lastError)") }
        // The back source is what "take photo" shows: a compressible moving picture, which vp8enc
        // codes at the call's bitrate at full rate (snow dropped it to about 3 fps: a gap).
        connection.videoSource = .cameras(front: .testPattern(pattern: "smpte"), back: .testPattern(pattern: "ball"))
        connection.flashlightHandler = DemoTorch()
        await connection.startRoom()
        let url = directory.appendingPathComponent("demo-leg\(number)-\(call.rtcId.prefix(8)).mkv")
        try await connection.startRecording(to: url)
        recordings.withLock { $0.append((number, url, printer.elapsed, nil)) }
        note("recording leg \(number) to \(url.path)")
        if muteDuringCall {
            Task {
                // Cancelled: the wait ends early and the loop or the guard after it decides.
                try? await Task.sleep(for: .seconds(9.5))
                guard !call.isEnded else { return }
                note("caller mutes the microphone")
                connection.setAudioEnabled(state: false)
                // Cancelled: the wait ends early and the loop or the guard after it decides.
                try? await Task.sleep(for: .seconds(2))
                note("caller unmutes")
                connection.setAudioEnabled(state: true)
            }
        }
        var newRtcId: String?
        for await event in events {
            if event.type == .TransferCompleted { newRtcId = event.data["rtcId"] }
        }
        let ended = printer.elapsed
        recordings.withLock { list in
            if let index = list.firstIndex(where: { $0.leg == number }) { list[index].endedAt = ended }
        }
        return newRtcId
    }

    private func summary(first: String, second: String, secondLegDials: Int) async throws {
        var legs: [[String: any Sendable]] = []
        var text = ["", "Demo summary",
                    "  leg 1: \(first) with Alice (hold, flash, photo, mute), transferred to Billing",
                    "  leg 2: \(second) with Bob, reached without a second DialEx (DialEx for it: \(secondLegDials))"]
        for entry in recordings.value {
            let inspection = try await RecordingInspection.inspect(entry.url)
            let report = inspection.report
            let legSeconds = (entry.endedAt ?? printer.elapsed) - entry.connectedAt
            let media = report.tracks.filter { $0.kind != "text" }
            var leg: [String: any Sendable] = [
                "leg": entry.leg, "recording": entry.url.path, "durationSeconds": report.duration, "legSeconds": legSeconds,
                "tracks": media.map { ["name": $0.name, "codec": $0.codec, "frames": $0.frames] as [String: any Sendable] },
                "chapters": report.chapters.map { ["label": $0.label, "start": $0.start, "end": $0.end ?? NSNull()] as [String: any Sendable] },
                "verdict": report.verdict.text,
            ]
            text.append("  recording leg \(entry.leg): \(entry.url.path)")
            text.append("    tracks: " + media.map { "\($0.name) \($0.codec) \($0.frames)" }.joined(separator: ", "))
            text.append(String(format: "    duration %.1f s for a %.1f s leg", report.duration, legSeconds))
            text.append("    chapters: " + report.chapters.map { chapter in
                chapter.end.map { String(format: "%@ %.1f–%.1fs", chapter.label, chapter.start, $0) }
                    ?? String(format: "%@ at %.1fs", chapter.label, chapter.start)
            }.joined(separator: "; "))
            if let stats = report.stats {
                text.append("    stats: \(stats.samples) samples in \(entry.url.lastPathComponent).stats.ndjson")
                leg["statsSamples"] = stats.samples
            }
            text.append("    verdict: \(report.verdict.text)")
            // The pictures go beside the recording: `ecv inspect` makes the same ones for any file.
            let base = entry.url.deletingPathExtension().path
            let timeline = URL(fileURLWithPath: base + "-timeline.png"), sheet = URL(fileURLWithPath: base + "-sheet.png")
            do throws(RecordingReviewError) {
                try await inspection.writeTimeline(png: timeline)
                text.append("    timeline: \(timeline.path)")
                leg["timeline"] = timeline.path
                try await ContactSheet.write(inspection, to: sheet)
                text.append("    contact sheet: \(sheet.path)")
                leg["contactSheet"] = sheet.path
            } catch {
                text.append("    pictures not written: \(error)")
                leg["picturesError"] = "\(error)"
            }
            legs.append(leg)
        }
        if printer.json {
            NDJSON.emit(["event": "summary", "firstLeg": first, "secondLeg": second, "secondLegDials": secondLegDials, "recordings": legs])
        } else {
            text.forEach(say)
        }
    }
}
