import BenchmarkSupport
import ECV
import ECVAgent
import ECVProtocol
import Foundation
import GStreamer

/// `bench-call cost-agents`: the child side. N receive-only bots that record their calls, decode
/// them, or only receive them (`--mode record|decode|receive`); prints "ready", then
/// `connected N recording M` once a second.
enum CostAgents {
    /// Recording bots' jitter buffers wait a second: nobody watches their picture live, and on 2 busy
    /// cores a 100 ms buffer gave up scheduling-delayed packets as lost (8 of 100 recordings complete).
    /// Decoding bots keep the SDK's 100 ms: at 1 s their calls stalled (not understood yet).
    static let botJitterBufferMs = 1000

    static func run(options: Options) async throws {
        guard let base = options.values["service-url"] else { throw BenchmarkError.badInput("--service-url is required") }
        let count = try options.int("bots", default: 1, range: 1...CallCostBenchmark.maximumCalls)
        let first = try options.int("first", default: 0, range: 0...1_000_000)
        let mode = options.values["mode"] ?? "record"
        guard CallCostBenchmark.modes[mode] != nil else { throw BenchmarkError.badInput("--mode is record, decode or receive, got \(mode)") }
        let decode = mode == "decode", record = mode == "record"
        let directory = options.values["dir"] ?? NSTemporaryDirectory()
        let jitterBufferMs = try options.values["jitter-buffer-ms"].map { _ in try options.int("jitter-buffer-ms", default: 0, range: 0...10_000) }
            ?? (decode ? nil : botJitterBufferMs)
        Logger.setLevel(logLevel: .error)
        try GStreamerRuntime.ensureInitialized()
        var bots: [AgentBot] = []
        let size = CallCostBenchmark.callSize
        for index in 0..<count {
            var configuration = AgentBotConfiguration(serviceUrl: base, name: "Bot \(first + index)", queues: ["default"],
                                                      parameters: ConnectParameters(videoWidth: size.width, videoHeight: size.height, noAudioProcessing: true),
                                                      receiveVideo: decode ? .renderer(name: "caller_video") : .discard,
                                                      receiveAudio: decode ? .audioSamples(name: "caller_audio") : .discard)
            configuration.sendsMedia = false
            if let jitterBufferMs { configuration.jitterBufferLatencyMs = jitterBufferMs }
            // `ECV_BENCH_BOT_STUN=none`: no STUN server, as the webrtcbin and Pion bots (host candidates only);
            // by default the address `ecv agent` uses, where nothing answers on this machine.
            if ProcessInfo.processInfo.environment["ECV_BENCH_BOT_STUN"] != "none" {
                configuration.iceServers = [ICEServer(urls: ["stun:127.0.0.1:3478"])]
            }
            let bot = try AgentBot(configuration: configuration)
            try await bot.connect()
            try await bot.ready()
            let events = bot.events()
            Task {
                for await event in events {
                    switch event {
                    case .callStarted(let call):
                        Task {
                            for await event in call.events() {
                                switch event {
                                case .connected where record && !call.isRecording:
                                    let url = URL(fileURLWithPath: directory).appendingPathComponent("\(call.rtcId).mkv")
                                    do { try await call.startRecording(to: url) } catch { emit("recording \(call.rtcId) failed: \(error)") }
                                case .disconnected: emit("event \(call.rtcId) disconnected")
                                default: break
                                }
                            }
                        }
                    case .callEnded(let rtcId, let reason): emit("event \(rtcId) ended \(reason)")
                    default: break
                    }
                }
            }
            bots.append(bot)
        }
        emit("ready")
        let loop = MainLoopLatency()
        while true {
            try await Task.sleep(for: .seconds(1))
            let calls = bots.flatMap(\.calls)
            emit("connected \(calls.filter(\.isConnected).count) recording \(calls.filter(\.isRecording).count) loop-ms \(loop.take())")
        }
    }
}
