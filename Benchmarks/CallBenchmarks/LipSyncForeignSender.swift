import BenchmarkSupport
import ECV
import ECVAgent
import ECVProtocol
import ECVRecording
import ECVService
import Foundation
import GLibCore
import GStreamer
import MediaTestSupport

/// Lip sync of a foreign sender (aiortc or headless Chromium) as an ECVKit agent bot records it:
/// a caller dials through the reference service on loopback, the bot (auto-accept, receive-only
/// as `ecv agent --receive-only --record`) joins the room first and offers, the foreign peer
/// answers with the caller's token and sends the flash/beep signal, and the bot records the call
/// (separate tracks, passthrough).
struct LipSyncForeignSender {
    enum Kind: String, CaseIterable, Sendable {
        case aiortc, chromium

        var row: String {
            switch self {
            case .aiortc: "aiortc (its MediaPlayer playing the clip's Matroska file, sent as VP8 + Opus)"
            case .chromium: "Chromium (headless, fake camera and microphone playing the clip's Y4M and WAV files, audio processing off, VP8 + Opus)"
            }
        }
    }

    let kind: Kind
    let python: String
    let work: URL
    let recordSeconds: Int

    /// The clip the sender plays: `seconds` seconds, each a white flash of 3 frames at the start of
    /// 30 (320×240) and a 1 kHz beep at half scale in its first 100 ms (48 kHz mono), made with
    /// GStreamer's own elements (as `gst-launch-1.0` would). Chromium's fake devices take a Y4M and
    /// a WAV file; aiortc's MediaPlayer one Matroska file (VP8 video, PCM audio). Longer than a
    /// call's media, since Chromium loops its fake camera's file a frame late (a 1 s file flashed
    /// every 1.033 s) while it loops the WAV file on time. The files are this process's own (its
    /// pid in their names): another run in the same work directory rewrites and removes its
    /// clip while this one's sender may still be playing it.
    static func makeClip(for kind: Kind, in work: URL, seconds: Int) async throws -> [String] {
        let caps = "video/x-raw,format=I420,width=320,height=240,framerate=30/1"
        let sound = "audio/x-raw,format=S16LE,rate=48000,channels=1"
        let flashes = String(repeating: "videotestsrc pattern=white num-buffers=3 ! \(caps) ! v. videotestsrc pattern=black num-buffers=27 ! \(caps) ! v. ",
                             count: seconds)
        let beeps = String(repeating: "audiotestsrc wave=sine freq=1000 volume=0.5 samplesperbuffer=4800 num-buffers=1 ! \(sound) ! a. "
                            + "audiotestsrc wave=silence samplesperbuffer=43200 num-buffers=1 ! \(sound) ! a. ", count: seconds)
        let files: [String], descriptions: [String]
        switch kind {
        case .chromium:
            files = [work.appendingPathComponent("lip-sync-\(getpid())-flash.y4m").path, work.appendingPathComponent("lip-sync-\(getpid())-beep.wav").path]
            descriptions = ["concat name=v ! videoconvert ! \(caps) ! y4menc ! filesink location=\(files[0]) " + flashes,
                            "concat name=a ! audioconvert ! \(sound) ! wavenc ! filesink location=\(files[1]) " + beeps]
        case .aiortc:
            files = [work.appendingPathComponent("lip-sync-\(getpid())-flash-beep.mkv").path]
            descriptions = ["matroskamux name=m ! filesink location=\(files[0]) concat name=v ! videoconvert ! \(caps) ! "
                            + "vp8enc deadline=1 keyframe-max-dist=30 ! m. concat name=a ! audioconvert ! \(sound) ! m. " + flashes + beeps]
        }
        for description in descriptions {
            let pipeline = try Pipeline(launch: description)
            try await pipeline.play()
            try await pipeline.waitForEndOfStream(timeout: .seconds(120))
            pipeline.stop()
        }
        return files
    }

    /// Runs `calls` calls one after another through one service and bot; each call's measurement or failure.
    func run(calls: Int) async throws -> [Result<FlashBeep.Measurement, any Error>] {
        let (service, base) = try await CallSetupBenchmark.startService(iceServers: [])
        var botConfiguration = AgentBotConfiguration(serviceUrl: base, name: "LipSync", queues: ["default"],
                                                     parameters: ConnectParameters(videoWidth: 320, videoHeight: 240, videoCodec: "VP8",
                                                                                   noAudioProcessing: true))
        botConfiguration.sendsMedia = false
        let bot = try AgentBot(configuration: botConfiguration)
        try await bot.connect()
        try await bot.ready()
        Logger.setLevel(logLevel: .error)
        let sdk = try ECVSdk(config: ECVSdkConfiguration(name: "lip-sync", serviceUrl: base,
                                                         iceServers: [ECVProtocol.ICEServer(urls: ["stun:127.0.0.1:3478"])]))
        let clip = try await Self.makeClip(for: kind, in: work, seconds: recordSeconds + 15)
        var results: [Result<FlashBeep.Measurement, any Error>] = []
        for index in 0..<calls {
            let url = work.appendingPathComponent("lip-sync-\(getpid())-\(kind.rawValue)-\(index).mkv")
            do {
                results.append(.success(try await call(index, url: url, sdk: sdk, bot: bot, base: base, clip: clip)))
            } catch {
                results.append(.failure(error))
            }
            for leftover in [url.path, url.path + ".chapters.json", url.path + ".stats.ndjson"] {
                // Measured already, or the call failed; a leftover file changes nothing.
                try? FileManager.default.removeItem(atPath: leftover)
            }
        }
        for file in clip {
            // Made again by the next run; a leftover file changes nothing.
            try? FileManager.default.removeItem(atPath: file)
        }
        if await FirstFrameBenchmark.bounded(.seconds(30), { await bot.logout() }) == nil { progress("lip-sync: the bot's logout did not end in 30 s") }
        if await FirstFrameBenchmark.bounded(.seconds(30), { await service.stop() }) == nil { progress("lip-sync: the service did not stop in 30 s") }
        return results
    }

    private func call(_ index: Int, url: URL, sdk: ECVSdk, bot: AgentBot, base: String,
                      clip: [String]) async throws -> FlashBeep.Measurement {
        let botEvents = bot.events()
        guard let call = await sdk.createVideoCall() else { throw BenchmarkError.failed("createVideoCall gave no call") }
        let dial = Task { await call.start(dialCallParameters: DialCallParameters(callerName: "Lip sync \(index)")) }
        var peer: BrowserPeer?
        var agentCall: AgentCall?
        defer { dial.cancel() }
        do {
            let answered = try await FirstFrameContext.callStarted(botEvents, rtcId: call.rtcId, timeout: .seconds(20))
            agentCall = answered
            try await FirstFrameContext.until(.seconds(20), "the bot joined room \(call.rtcId)") {
                answered.eventHistory.contains(.joinedRoom(initiator: true))
            }
            guard let token = call.callerToken else { throw BenchmarkError.failed("the dial gave no caller token") }
            peer = try foreignPeer(room: call.rtcId, token: token, base: base, clip: clip)
            try await FirstFrameContext.until(.seconds(45), "the bot's call connected", every: .milliseconds(20)) { answered.isConnected }
            try await answered.startRecording(to: url)
            try await Task.sleep(for: .seconds(recordSeconds)) // media time to record
            let summary = try await answered.stopRecording()
            progress("lip-sync: \(kind.rawValue) call \(index) recording stopped: "
                     + (summary.map { "\($0.duration), tracks \($0.tracks.map(\.rawValue).sorted()), dropped \($0.droppedTracks)" } ?? "no recording"))
        } catch {
            await agentCall?.hangup()
            call.hangup()
            await peer?.close()
            throw error
        }
        await agentCall?.hangup()
        call.hangup()
        await peer?.close()
        // The bot is offered the next call only once this one has ended on its side.
        try await FirstFrameContext.until(.seconds(10), "the bot's call ended", every: .milliseconds(20)) { agentCall?.isEnded ?? true }
        let info = try await RecordingInspector.inspect(url)
        LipSyncBenchmark.describe(info, of: url, call: "\(kind.rawValue) call \(index)")
        let videoPads = info.videoTracks.filter { $0.title == "caller video" }.map(\.pad)
        let audioPads = info.audioTracks.filter { $0.title == "caller audio" }.map(\.pad)
        return try await FlashBeep.measure(url, videoPads: videoPads, audioPads: audioPads, settledAfter: LipSyncBenchmark.settledAfter)
    }

    private func foreignPeer(room: String, token: String, base: String, clip: [String]) throws -> BrowserPeer {
        // Seconds of media after the channel opened: past the recording, with a margin for its start and stop.
        let duration = String(recordSeconds + 8)
        switch kind {
        case .aiortc:
            return try BrowserPeer(name: "aiortc", command: [python, "-u", "Tests/Interop/peers/aiortc_peer.py", "--url", base, "--room", room,
                                                             "--role", "caller", "--codec", "VP8", "--token", token, "--play", clip[0],
                                                             "--duration", duration, "--connect-timeout", "30"])
        case .chromium:
            var page = URLComponents(string: base + "/r/" + room)
            page?.queryItems = [URLQueryItem(name: "role", value: "caller"), URLQueryItem(name: "codec", value: "VP8"),
                                URLQueryItem(name: "video", value: "320x240"), URLQueryItem(name: "audio", value: "raw"),
                                URLQueryItem(name: "token", value: token)]
            guard let url = page?.string, clip.count == 2 else { throw BenchmarkError.failed("no page URL for room \(room)") }
            return try BrowserPeer(name: "chromium", command: [python, "-u", "Tests/Interop/peers/chromium_peer.py", "--page", url,
                                                               "--video-file", clip[0], "--audio-file", clip[1],
                                                               "--duration", duration, "--connect-timeout", "45"])
        }
    }
}
