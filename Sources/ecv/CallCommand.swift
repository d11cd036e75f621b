import ECV
import Foundation
import GLibCore
import GStreamer
import MediaPipeline

/// `ecv call`: a headless caller: dial, wait in the queue, connect, optionally record, hang up.
enum CallCommand {
    static let usage = """
        ecv call [options]       place a call as a caller
          --service-url URL        the ECV service (or --env NAME / the current environment)
          --env NAME               an environment saved with `ecv env add`
          --webrtc-url URL --signaling-url URL
          --name NAME              caller name (default: generated)
          --queue NAME             target queue (default: the service's)
          --attr KEY=VALUE         attached data (repeatable; checked against the environment's attributes)
          --acd KEY=VALUE          ACD attributes, e.g. priority=5, hearingImpaired=true (repeatable)
          --queue-mode socket|info|legacy   how to wait (default: the environment's, else socket)
          --ice-server URL         extra ICE server (repeatable)
          --pin PIN                pin the service's TLS certificate: sha256/<base64 SPKI>, 64 hex digits,
                                   a .der/.pem file or Base64 DER (repeatable; a malformed pin is an error)
          --signaling-pin PIN      pins for the rooms and collider (default: the --pin list)
          --ca-file FILE           PEM CA certificates trusted instead of the system store
          --record FILE            record the call (.mkv, .webm or .mp4 by extension); a transferred call's
                                   next leg records beside it, to FILE-<new rtcId>.<ext>. Checked before dialing:
                                   the folder exists, FILE does not, the container holds every codec the call
                                   may negotiate (.mkv: all; .webm: --codec VP8,VP9; .mp4: --codec H264,VP9)
          --overwrite              replace an existing --record FILE
          --record-layout tracks|pip   separate tracks as sent (default), or one picture: the agent
                                   full-frame, the caller inset (re-encoded; .mkv or .webm)
          --duration SEC           hang up after SEC seconds of connected call, per leg (default: until the agent hangs up or Ctrl-C)
        A transfer is followed: the next leg waits on the queue socket with the new rtcId, never dialed.
          --stats                  a one-line stats ticker every second while connected
          --json                   one JSON object per line (events and stats; with --record, a Recording object after
                                   each leg's last event: file, written, problem), nothing else
        \(MediaOptions.help)
        \(LogOptions.help)
          Exits 0 when the call ended by a hangup (either side) with its recording written, 1 otherwise.
        """

    static let spec = OptionSpec(values: ["service-url", "env", "webrtc-url", "signaling-url", "name", "queue", "attr", "acd", "queue-mode",
                                          "ice-server", "pin", "signaling-pin", "ca-file", "record", "record-layout", "duration"],
                                 flags: ["json", "stats", "overwrite"]) + MediaOptions.spec + LogOptions.spec

    static func run(_ words: [String]) async throws(CLIError) {
        var arguments = try Arguments(words, spec)
        let environment = try EnvironmentStore().environment(named: arguments.value("env"))
        guard let serviceUrl = arguments.value("service-url") ?? environment?.serviceUrl else {
            throw .usage("give --service-url URL or --env NAME (or `ecv env use NAME`)")
        }
        let mode = arguments.value("queue-mode") ?? environment?.queueMode ?? "socket"
        guard ["socket", "info", "legacy"].contains(mode) else { throw .usage("--queue-mode takes socket, info or legacy") }
        var attributes: [String: String] = [:]
        for pair in arguments.values("attr") { let (key, value) = try keyValue(pair, option: "attr"); attributes[key] = value }
        if let environment {
            do { attributes = try environment.callAttributes.dialAttributes(choosing: attributes) } catch { throw .usage(error.description) }
        }
        var acd: [String: String] = [:]
        for pair in arguments.values("acd") { let (key, value) = try keyValue(pair, option: "acd"); acd[key] = value }
        let parameters = try MediaOptions.parameters(&arguments)
        let video = MediaOptions.video(&arguments, default: .testPattern(pattern: "smpte"))
        let audio = MediaOptions.audio(&arguments)
        let recordPath = arguments.path("record"), overwrite = arguments.flag("overwrite")
        let layout: RecordingLayout
        switch arguments.value("record-layout") ?? "tracks" {
        case "tracks": layout = .separateTracks
        case "pip": layout = .pictureInPicture
        case let other: throw .usage("--record-layout takes tracks or pip, not '\(other)'")
        }
        if overwrite && recordPath == nil { throw .usage("--overwrite needs --record FILE") }
        let duration = try arguments.positive("duration")
        let json = arguments.flag("json"), ticker = arguments.flag("stats")
        let dial = DialCallParameters(callerName: arguments.value("name"), attributes: attributes,
                                      queue: arguments.value("queue") ?? environment?.queues.first, acdAttributes: acd)
        var configuration = ECVSdkConfiguration(
            name: environment?.name ?? "cli", serviceUrl: serviceUrl, useQueueSocket: mode == "socket",
            webrtcUrl: arguments.value("webrtc-url") ?? environment?.webrtcUrl,
            signalingUrl: arguments.value("signaling-url") ?? environment?.signalingUrl, useQueueInfo: mode == "info")
        environment?.applyPollingSettings(to: &configuration)
        configuration.iceServers = arguments.values("ice-server").map { ICEServer(urls: [$0]) }
        if configuration.iceServers.isEmpty { configuration.iceServers = [ICEServer(urls: ["stun:127.0.0.1:3478"])] }
        configuration.pinnedCertificates = arguments.values("pin")
        configuration.signalingPinnedCertificates = arguments.values("signaling-pin")
        configuration.trustedCAFile = arguments.path("ca-file")
        let logging = try LogOptions.read(&arguments)
        try arguments.finish()
        let decisions = try MediaOptions.check(parameters, video: video, audio: audio)
        let record = try recordPath.map { path throws(CLIError) in
            try RecordingTarget.file(path, overwrite: overwrite, codecs: MediaOptions.negotiableCodecs(parameters),
                                     composite: layout == .pictureInPicture)
        }

        LogOptions.install(logging)
        for decision in decisions { Logger.info("media: \(decision)") }
        Interrupts.install()
        let printer = CallPrinter(json: json)
        let sdk: ECVSdk
        do { sdk = try ECVSdk(config: configuration) } catch { throw .usage(error.description) }
        sdk.modules.onCallEvent.append { call, event, _ in printer.event(call, event) }
        guard let first = await sdk.createVideoCall(), !first.isEnded else { throw .failed("no call: \(sdk.config.serviceUrl)") }
        let leg = Leg(parameters: parameters, video: video, audio: audio, layout: layout, duration: duration,
                      stats: ticker || json, printer: printer)
        let current = Locked(first)
        let interrupted = Locked(false)
        let interrupt = Task {
            await Interrupts.wait()
            interrupted.withLock { $0 = true }
            current.value.hangup()
        }
        defer { interrupt.cancel() }
        var outcome = try await leg.run(first, record: record) { await $0.start(dialCallParameters: dial) }
        // A transfer ends this leg and names the next one (§7.1 of the Turkish guide): a new call
        // object for the new rtcId, never dialed, waiting on the queue socket until an agent takes it.
        while outcome.endDetail == CallEndReason.transferred.rawValue, let next = outcome.transferredTo, !interrupted.value {
            if !json { say("call \(current.value.rtcId) transferred to \(next)") }
            guard let transferred = await sdk.createVideoCall(rtcId: next) else { throw .failed("no call object for the transferred leg \(next)") }
            current.withLock { $0 = transferred }
            if interrupted.value { transferred.hangup() }
            outcome = try await leg.run(transferred, record: record.map { $0.at(transferredLegPath($0.path, rtcId: next)) }) { call in
                call.isDialed = true
                await call.createQueueSocket()
            }
        }
        let call = current.value
        // Only a call that ended by a hangup (either side) succeeded; a timeout, a vanished peer or
        // an error exits non-zero, so scripts can tell. A transfer is followed, so it never ends here.
        let cleanEnds: Set<String> = [CallEndReason.localHangup.rawValue, CallEndReason.remoteHangup.rawValue]
        guard let detail = outcome.endDetail, cleanEnds.contains(detail) else {
            let reason = call.lastError.name != .NO_ERROR ? call.lastError.description : outcome.endDetail ?? "no CallEnded event"
            throw .failed("the call ended with \(reason)")
        }
        if !outcome.neverCarried.isEmpty {
            throw .failed("the call ended without media it had negotiated: no \(outcome.neverCarried.joined(separator: ", no ")) at all")
        }
        if let lost = leg.lostRecordings.first { throw .failed(lost) }
    }

    /// Where a transferred leg records when the call records to `path`: beside it, named after the
    /// leg's rtcId (`call.mkv` → `call-<rtcId>.mkv`).
    static func transferredLegPath(_ path: String, rtcId: String) -> String {
        let url = URL(fileURLWithPath: path)
        let stem = url.deletingPathExtension().lastPathComponent, ext = url.pathExtension
        return url.deletingLastPathComponent().appendingPathComponent(stem + "-" + rtcId + (ext.isEmpty ? "" : "." + ext)).path
    }

    /// One leg of a call: wait for the agent, connect, record, tick, until the leg ends.
    struct Leg {
        let parameters: ConnectParameters
        let video: VideoSourceSpec
        let audio: AudioSourceSpec
        let layout: RecordingLayout
        let duration: Double?
        let stats: Bool
        let printer: CallPrinter
        /// Why each recording the run asked for was not written, in order.
        private let lost = Locked<[String]>([])

        init(parameters: ConnectParameters, video: VideoSourceSpec, audio: AudioSourceSpec, layout: RecordingLayout, duration: Double?,
             stats: Bool, printer: CallPrinter) {
            (self.parameters, self.video, self.audio, self.layout, self.duration, self.stats, self.printer)
                = (parameters, video, audio, layout, duration, stats, printer)
        }

        var lostRecordings: [String] { lost.value }

        func run(_ call: VideoCall, record: RecordingTarget?, wait: (VideoCall) async -> Void) async throws(CLIError) -> CallOutcome {
            let outcome = CallOutcome()
            let watcher = Task { for await event in call.events() { outcome.note(event) } }
            await wait(call)
            guard await call.agentConnected?.value == true else {
                _ = await watcher.value
                await printer.waitUntilEndPrinted(call.rtcId)
                throw .failed("the call ended before an agent connected: \(outcome.endDetail ?? call.lastError.description)")
            }
            guard let connection = call.connect(parameters: parameters) else { throw .failed(call.lastError.description) }
            connection.videoSource = .cameras(front: video, back: .testPattern(pattern: "ball"))
            connection.audioSource = audio
            await connection.startRoom()
            var recordingProblem: String?
            if let record, !call.isEnded {
                do {
                    try record.clearOldFile()
                    try await connection.startRecording(to: URL(fileURLWithPath: record.path), format: record.format, layout: layout)
                } catch {
                    recordingProblem = "\(error)"
                    printErr("ecv call: recording to \(record.path) failed: \(error)")
                }
            }
            let ticker = stats ? Task { [printer] in
                var earlier: PeerStats?
                while !Task.isCancelled && !call.isEnded {
                    // Cancelled: the wait ends early and the loop or the guard after it decides.
                    try? await Task.sleep(for: .seconds(1))
                    guard connection.isConnected, let sample = await connection.stats() else { continue }
                    printer.statsLine(sample, since: earlier, call: call.rtcId)
                    earlier = sample
                }
            } : nil
            // --duration counts connected time, so a short call still gets its stats lines.
            let timer = duration.map { seconds in
                Task {
                    // Cancelled: the wait ends early and the loop or the guard after it decides.
                    while !connection.isConnected && !call.isEnded { try? await Task.sleep(for: .milliseconds(50)) }
                    // Cancelled: the wait ends early and the loop or the guard after it decides.
                    try? await Task.sleep(for: .seconds(seconds))
                    call.hangup()
                }
            }
            _ = await watcher.value
            timer?.cancel(); ticker?.cancel()
            await printer.waitUntilEndPrinted(call.rtcId)
            // A recording counts only when it was written and finalised: a failure to start, a
            // RECORDING_FAILED while the call closed it, or an empty file is a lost recording.
            if let record {
                if recordingProblem == nil { recordingProblem = outcome.recordingFailure ?? (record.written ? nil : "nothing was written") }
                if let recordingProblem { lost.withLock { $0.append("the recording \(record.path) was not written: \(recordingProblem)") } }
            }
            if printer.json {
                // After the leg's last event, only when it recorded: whether its file was written.
                if let record {
                    NDJSON.emit(["event": "Recording", "rtcId": call.rtcId, "file": record.path, "written": recordingProblem == nil,
                                 "problem": recordingProblem ?? NSNull()])
                }
            } else {
                let recordingText = record.map { record in
                    recordingProblem.map { ", recording NOT written (\($0)): \(record.path)" } ?? ", recording: \(record.path)"
                } ?? ""
                say("call \(call.rtcId) ended: \(outcome.endDetail ?? "?")" + recordingText)
            }
            return outcome
        }
    }

    static func keyValue(_ text: String, option: String) throws(CLIError) -> (String, String) {
        guard let equals = text.firstIndex(of: "=") else { throw .usage("--\(option) takes KEY=VALUE, not '\(text)'") }
        return (String(text[..<equals]), String(text[text.index(after: equals)...]))
    }
}

/// How a call's leg ended, collected from its events.
final class CallOutcome: Sendable {
    private struct State {
        var endDetail: String?
        var transferredTo: String?
        var recordingFailure: String?
        var events: [VideoCallEventType] = []
        var neverCarried: [String] = []
    }
    private let state = Locked(State())
    func note(_ event: VideoCallEvent) {
        state.withLock { state in
            state.events.append(event.type)
            if event.type == .CallEnded { state.endDetail = event.detail }
            if event.type == .MediaSilent, event.data["everCarried"] == "false" { state.neverCarried.append(event.detail ?? "media") }
            if event.type == .Error, event.data["name"] == ErrorName.RECORDING_FAILED.rawValue, state.recordingFailure == nil {
                state.recordingFailure = event.detail ?? "RECORDING_FAILED"
            }
            // A transferred leg's last event (no CallEnded follows it).
            if event.type == .TransferCompleted, let rtcId = event.data["rtcId"], !rtcId.isEmpty {
                state.transferredTo = rtcId
                state.endDetail = CallEndReason.transferred.rawValue
            }
        }
    }
    var endDetail: String? { state.value.endDetail }
    /// The next leg's rtcId, when a transfer completed.
    var transferredTo: String? { state.value.transferredTo }
    /// The first RECORDING_FAILED the leg reported (a recording that could not be finalised).
    var recordingFailure: String? { state.value.recordingFailure }
    var events: [VideoCallEventType] { state.value.events }
    /// Negotiated directions that carried not one packet ("video received"), from `MediaSilent`.
    var neverCarried: [String] { state.value.neverCarried }
}
