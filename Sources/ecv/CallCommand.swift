import ECV
import Foundation
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
          --record FILE            record the call (.mkv, .webm or .mp4 by extension)
          --duration SEC           hang up after SEC seconds of connected call (default: until the agent hangs up or Ctrl-C)
          --stats                  a one-line stats ticker every second while connected
          --json                   one JSON object per line (events and stats) instead of text
        \(MediaOptions.help)
        """

    static func run(_ words: [String]) async throws(CLIError) {
        var arguments = try Arguments(words, flags: MediaOptions.flags.union(["json", "stats"]))
        let environment = try EnvironmentStore().environment(named: arguments.value("env"))
        guard let serviceUrl = arguments.value("service-url") ?? environment?.serviceUrl else {
            throw .usage("give --service-url URL or --env NAME (or `ecv env use NAME`)")
        }
        let mode = arguments.value("queue-mode")
            ?? environment.map { $0.useQueueSocket ? "socket" : $0.useQueueInfo ? "info" : "legacy" } ?? "socket"
        guard ["socket", "info", "legacy"].contains(mode) else { throw .usage("--queue-mode takes socket, info or legacy") }
        var attributes: [String: String] = [:]
        for pair in arguments.values("attr") { let (key, value) = try keyValue(pair, option: "attr"); attributes[key] = value }
        if let environment { attributes = try environment.resolveAttributes(attributes) }
        var acd: [String: String] = [:]
        for pair in arguments.values("acd") { let (key, value) = try keyValue(pair, option: "acd"); acd[key] = value }
        let parameters = try MediaOptions.parameters(&arguments)
        let video = MediaOptions.video(&arguments, default: .testPattern(pattern: "smpte"))
        let audio = MediaOptions.audio(&arguments)
        let record = arguments.value("record")
        let duration = try arguments.double("duration")
        let json = arguments.flag("json"), ticker = arguments.flag("stats")
        let dial = DialCallParameters(callerName: arguments.value("name"), attributes: attributes,
                                      queue: arguments.value("queue") ?? environment?.queues.first, acdAttributes: acd)
        var configuration = ECVSdkConfiguration(
            name: environment?.name ?? "cli", serviceUrl: serviceUrl, useQueueSocket: mode == "socket",
            webrtcUrl: arguments.value("webrtc-url") ?? environment?.webrtcUrl,
            signalingUrl: arguments.value("signaling-url") ?? environment?.signalingUrl, useQueueInfo: mode == "info")
        configuration.iceServers = arguments.values("ice-server").map { ICEServer(urls: [$0]) }
        if configuration.iceServers.isEmpty { configuration.iceServers = [ICEServer(urls: ["stun:127.0.0.1:3478"])] }
        configuration.pinnedCertificates = arguments.values("pin")
        configuration.signalingPinnedCertificates = arguments.values("signaling-pin")
        configuration.trustedCAFile = arguments.value("ca-file")
        try arguments.finish()

        Logger.setLevel(logLevel: .warn)
        Interrupts.install()
        let printer = CallPrinter(json: json)
        let sdk: ECVSdk
        do { sdk = try ECVSdk(config: configuration) } catch { throw .usage(error.description) }
        sdk.modules.onCallEvent.append { call, event, _ in printer.event(call, event) }
        guard let call = await sdk.createVideoCall(), !call.isEnded else { throw .failed("no call: \(sdk.config.serviceUrl)") }
        let outcome = CallOutcome()
        let watcher = Task { for await event in call.events() { outcome.note(event) } }
        await call.start(dialCallParameters: dial)
        let interrupt = Task { await Interrupts.wait(); call.hangup() }
        guard await call.agentConnected?.value == true else {
            interrupt.cancel()
            _ = await watcher.value
            throw .failed("the call ended before an agent connected: \(outcome.endDetail ?? call.lastError.description)")
        }
        guard let connection = call.connect(parameters: parameters) else { throw .failed(call.lastError.description) }
        connection.videoSource = .cameras(front: video, back: .testPattern(pattern: "ball"))
        connection.audioSource = audio
        await connection.startRoom()
        if let record, !call.isEnded {
            do { try await connection.startRecording(to: URL(fileURLWithPath: record), format: format(of: record)) } catch {
                printErr("ecv call: recording failed: \(error)")
            }
        }
        let stats = ticker || json ? Task {
            var earlier: PeerStats?
            while !Task.isCancelled && !call.isEnded {
                try? await Task.sleep(for: .seconds(1))
                guard connection.isConnected, let sample = await connection.stats() else { continue }
                printer.statsLine(sample, since: earlier)
                earlier = sample
            }
        } : nil
        // --duration counts connected time, so a short call still gets its stats lines.
        let timer = duration.map { seconds in
            Task {
                while !connection.isConnected && !call.isEnded { try? await Task.sleep(for: .milliseconds(50)) }
                try? await Task.sleep(for: .seconds(seconds))
                call.hangup()
            }
        }
        _ = await watcher.value
        timer?.cancel(); stats?.cancel(); interrupt.cancel()
        if !json { say("call \(call.rtcId) ended: \(outcome.endDetail ?? "?")" + (record.map { ", recording: \($0)" } ?? "")) }
        // Only a call that ended by a hangup (either side) or a transfer succeeded; a timeout, a
        // vanished peer or an error exits non-zero, so scripts can tell.
        let cleanEnds: Set<String> = [CallEndReason.localHangup, CallEndReason.remoteHangup, CallEndReason.transferred]
        guard let detail = outcome.endDetail, cleanEnds.contains(detail) else {
            let reason = call.lastError.name != .NO_ERROR ? call.lastError.description : outcome.endDetail ?? "no CallEnded event"
            throw .failed("the call ended with \(reason)")
        }
    }

    static func format(of path: String) -> RecordingFormat {
        switch (path as NSString).pathExtension.lowercased() {
        case "webm": .webm
        case "mp4": .mp4
        default: .matroska
        }
    }

    static func keyValue(_ text: String, option: String) throws(CLIError) -> (String, String) {
        guard let equals = text.firstIndex(of: "=") else { throw .usage("--\(option) takes KEY=VALUE, not '\(text)'") }
        return (String(text[..<equals]), String(text[text.index(after: equals)...]))
    }
}

/// How a call ended, collected from its events.
final class CallOutcome: Sendable {
    private let state = Locked<(endDetail: String?, events: [VideoCallEventType])>((nil, []))
    func note(_ event: VideoCallEvent) {
        state.withLock { state in
            state.events.append(event.type)
            if event.type == .CallEnded { state.endDetail = event.detail }
        }
    }
    var endDetail: String? { state.value.endDetail }
    var events: [VideoCallEventType] { state.value.events }
}
