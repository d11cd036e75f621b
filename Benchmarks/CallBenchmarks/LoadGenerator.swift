import BenchmarkSupport
import ECV
import Foundation
import GLibCore
import GStreamer
import MediaPipeline

/// `bench-call load`: N real ECV callers (SDK, reference service, webrtcbin with ICE and
/// DTLS-SRTP) whose send graphs play a clip encoded once (`ClipPlayer`) instead of encoding.
/// Talks to its parent by lines: prints `ready` once the clip is encoded, `connected N` every
/// second; on stdin, `dial` places the calls, `mark` prints `counts {json}` (what each call was
/// sent so far, by rtcId), `hangup` ends every call, prints the counts and exits. At most
/// `--concurrency` calls set up at once (`SetupSlots`).
enum LoadGenerator {
    static let callersPerSdk = 4
    /// Calls setting up at once (`--concurrency`), see `SetupSlots`.
    static let defaultConcurrency = 10

    static func run(options: Options) async throws {
        guard let base = options.values["service-url"] else { throw BenchmarkError.badInput("--service-url is required") }
        let calls = try options.int("calls", default: 1, range: 1...CallCostBenchmark.maximumCalls)
        let slots = SetupSlots(limit: try options.int("concurrency", default: defaultConcurrency, range: 1...CallCostBenchmark.maximumCalls))
        let codec = (options.values["codecs"] ?? "vp8").uppercased()
        guard ["VP8", "H264"].contains(codec) else { throw BenchmarkError.badInput("--codecs for load is vp8 or h264") }
        Logger.setLevel(logLevel: .error)
        try GStreamerRuntime.ensureInitialized()
        let size = CallCostBenchmark.callSize
        let clip = try await EncodedClip.encode(codec: codec, width: size.width, height: size.height, fps: size.fps, seconds: 10, kbps: 300)
        let player = ClipPlayer(clip: clip)
        let commands = StandardInputLines()
        emit("ready \(clip.video.count) video frames (\(clip.keyFrames.count) key frames), \(clip.audio.count) audio packets")
        // Callers are separate devices: an SDK's HTTP client keeps 8 connections to the service,
        // and 50 callers' requests queued behind one another's until they timed out.
        let sdks = try (0..<(calls + callersPerSdk - 1) / callersPerSdk).map { _ in
            try ECVSdk(config: ECVSdkConfiguration(name: "load", serviceUrl: base, iceServers: [ICEServer(urls: ["stun:127.0.0.1:3478"])]))
        }
        let parameters = {
            var parameters = ConnectParameters(videoWidth: size.width, videoHeight: size.height, videoFps: size.fps, noAudioProcessing: true)
            parameters.videoCodec = codec
            return parameters
        }()
        let placed = Locked<[VideoCall]>([])
        let connected = Locked<Int>(0)
        let loop = MainLoopLatency()
        let status = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(1)) // cancelled at hangup; the loop ends then
                emit("connected \(connected.value) loop-ms \(loop.take())")
            }
        }
        var dialling: Task<Void, Never>?
        for await command in commands.lines {
            switch command {
            case "dial":
                // Dialling waits for set-up slots: a task of its own, so `mark` and `hangup` are
                // answered while calls are still being placed (they waited for the last dial before).
                dialling = Task {
                    for index in 0..<calls where !Task.isCancelled {
                        await slots.acquire()
                        guard let call = await sdks[index / callersPerSdk].createVideoCall() else {
                            await slots.release()
                            continue
                        }
                        placed.withLock { $0.append(call) }
                        Task {
                            await drive(call, index: index, parameters: parameters, player: player, connected: connected) { await slots.release() }
                        }
                        // Dial at a steady pace rather than all at once, as callers arrive. Cancelled at hangup.
                        try? await Task.sleep(for: .milliseconds(20))
                    }
                }
            case "mark":
                emit("counts " + (try encode(player.counts())))
            case "hangup":
                dialling?.cancel()
                await dialling?.value
                let counts = player.counts()
                status.cancel()
                player.stop()
                for call in placed.value { call.hangup() }
                // Each hangup reaches the service before the process (and its sockets) goes.
                try await Task.sleep(for: .seconds(2))
                emit("counts " + (try encode(counts)))
                emit("done")
                return
            default:
                emit("unknown command \(command)")
            }
        }
    }

    /// One caller: dial, connect with pre-encoded media when the agent answers, feed the player
    /// once the send graph exists, and count the call once media flows. `setUp` runs once, when the
    /// call first connects or ends, whichever comes first.
    private static func drive(_ call: VideoCall, index: Int, parameters: ConnectParameters, player: ClipPlayer, connected: Locked<Int>,
                              setUp: @escaping @Sendable () async -> Void) async {
        var settingUp = true
        func finishSetUp() async {
            guard settingUp else { return }
            settingUp = false
            await setUp()
        }
        defer { if settingUp { Task { await setUp() } } }
        let events = call.events()
        var connection: WebRtcConnection?
        await call.start(dialCallParameters: DialCallParameters(callerName: "Load \(index)"))
        for await event in events {
            switch event.type {
            case .AgentConnected:
                guard let made = call.connect(parameters: parameters) else { return }
                made.sendsPreEncodedMedia = true
                made.localPreviewEnabled = false
                made.remoteAudioSink = .discard
                connection = made
                Task { await made.startRoom() }
            case .GotLocalStream:
                // Read straight from the actor, not through `perform`: that would queue behind the
                // negotiation, which waits for the caps only these appsrcs' first buffers bring.
                guard let media = await connection?.peerConnection?.media,
                      // why (`try?`): an element that is no appsrc means another graph, reported below.
                      let audio = media.elements.elements[PreEncodedSend.audioSource].flatMap({ try? AppSource($0) }) else {
                    emit("call \(index): no pre-encoded send graph")
                    continue
                }
                // why (`try?`): no video appsrc in an audio-only graph.
                let video = media.elements.elements[PreEncodedSend.videoSource].flatMap { try? AppSource($0) }
                player.add(ClipPlayer.Feed(video: video, audio: audio), for: call.rtcId)
            case .WebRtcConnected:
                connected.withLock { $0 += 1 }
                await finishSetUp()
            case .CallEnded:
                emit("event \(call.rtcId) ended \(event.detail ?? "")")
                await finishSetUp()
                return
            case .WebRtcDisconnected, .WebRtcFailed, .ConnectionTimeoutStart, .Error:
                emit("event \(call.rtcId) \(event.type) \(event.detail ?? "")")
            default:
                break
            }
        }
    }

    private static func encode(_ counts: [String: ClipPlayer.Counts]) throws -> String {
        String(decoding: try JSONEncoder().encode(counts), as: UTF8.self)
    }
}

/// The process's standard input as lines, read on a thread of its own.
final class StandardInputLines: Sendable {
    let lines: AsyncStream<String>

    init() {
        let (stream, continuation) = AsyncStream.makeStream(of: String.self)
        lines = stream
        let thread = Thread {
            while let line = readLine() { continuation.yield(line.trimmingCharacters(in: .whitespaces)) }
            continuation.finish()
        }
        thread.start()
    }
}

/// One line to the parent, unbuffered. A parent that has stopped reading (it ends a child it
/// started under a profiler by signalling the profiler, and the child's last line then meets a
/// closed pipe) is no error of the child's.
func emit(_ line: String) {
    // The parent has gone: there is no one left to tell.
    try? FileHandle.standardOutput.write(contentsOf: Data((line + "\n").utf8))
}
