import BenchmarkSupport
import ECV
import ECVAgent
import ECVProtocol
import ECVService
import Foundation
import GLibCore
import GStreamer

/// Call setup time through the whole stack: caller SDK, reference service (queue socket, rooms,
/// collider) and an agent bot, all real, on loopback.
enum CallSetupBenchmark: CallBenchmark {
    static let name = "setup"
    static let method = """
        Each call: `createVideoCall()` and `start()` (DialEx, queue socket), the agent bot accepts, the caller \
        `connect()`s and `startRoom()`s as soon as AgentConnected arrives (the app's reaction time is included). \
        Times come from the SDK's event timestamps and the renderer's first frame; calls run one after another \
        and hang up after the first frame. Both sides send 640×480 VP8 + Opus. Reference service, caller and bot \
        share this process.
        """

    static func run(options: Options, report: inout BenchmarkReport) async throws {
        let calls = options.has("smoke") ? 3 : 20
        let timer = SectionTimer()
        let (service, base) = try await startService()
        var botConfiguration = AgentBotConfiguration(serviceUrl: base, name: "Setup", queues: ["default"],
                                                     parameters: ConnectParameters(videoWidth: 640, videoHeight: 480))
        botConfiguration.iceServers = [ICEServer(urls: ["stun:127.0.0.1:3478"])]
        let bot = try AgentBot(configuration: botConfiguration)
        try await bot.connect()
        try await bot.ready()
        Logger.setLevel(logLevel: .error)
        let sdk = try ECVSdk(config: ECVSdkConfiguration(name: "setup", serviceUrl: base, iceServers: [ICEServer(urls: ["stun:127.0.0.1:3478"])]))
        var toAgent: [Double] = [], toMedia: [Double] = [], toFrame: [Double] = [], total: [Double] = []
        // Where AgentConnected → WebRtcConnected goes: each of the caller's events on the way, ms after AgentConnected.
        var steps: [String: [Double]] = [:]
        for index in 0..<(calls + 1) { // the first call warms caches and is not counted
            guard let call = await sdk.createVideoCall() else { throw BenchmarkError.badInput("no call") }
            let events = call.events()
            let started = Date()
            let firstFrame = FirstFrame()
            Task {
                await call.start(dialCallParameters: DialCallParameters(callerName: "Setup \(index)"))
            }
            var agentAt: Date?, mediaAt: Date?
            var seen: [VideoCallEventType: Date] = [:]
            var watching: Task<Void, Never>?
            var webrtc: WebRtcConnection?
            let transport = Locked<[String: Date]>([:])
            for await event in events {
                if agentAt != nil, mediaAt == nil, seen[event.type] == nil { seen[event.type] = event.createdAt }
                if event.type == .RtcPeerConnectionCreated, let peer = webrtc?.peerConnection {
                    // ICE and DTLS inside the peer: when each first reached its next state.
                    let peerEvents = peer.events()
                    watching = Task {
                        for await peerEvent in peerEvents {
                            let name: String? = switch peerEvent {
                            case .iceConnectionStateChanged(let state): "ICE \(state.rawValue)"
                            case .connectionStateChanged(let state): "transport \(state.rawValue)"
                            default: nil
                            }
                            if let name { transport.withLock { if $0[name] == nil { $0[name] = Date() } } }
                        }
                    }
                }
                if event.type == .AgentConnected {
                    agentAt = event.createdAt
                    guard let connection = call.connect(parameters: ConnectParameters(videoWidth: 640, videoHeight: 480)) else { break }
                    webrtc = connection
                    connection.remoteVideoRenderer = firstFrame
                    Task { await connection.startRoom() }
                }
                if event.type == .WebRtcConnected { mediaAt = event.createdAt }
                if mediaAt != nil {
                    if await firstFrame.wait(timeout: .seconds(10)) == nil { progress("setup: call \(index) rendered no frame") }
                    call.hangup()
                }
                if event.type == .CallEnded { break }
            }
            guard index > 0, let agentAt, let mediaAt else { continue }
            watching?.cancel()
            for step in Self.steps { if let at = seen[step] { steps[step.rawValue, default: []].append(at.timeIntervalSince(agentAt) * 1000) } }
            for (name, at) in transport.value { steps[name, default: []].append(at.timeIntervalSince(agentAt) * 1000) }
            toAgent.append(agentAt.timeIntervalSince(started) * 1000)
            toMedia.append(mediaAt.timeIntervalSince(agentAt) * 1000)
            total.append(mediaAt.timeIntervalSince(started) * 1000)
            if let frameAt = firstFrame.time { toFrame.append(frameAt.timeIntervalSince(agentAt) * 1000) }
            progress(String(format: "setup: call %d: agent %.0f ms, media %.0f ms after", index, toAgent.last!, toMedia.last!))
        }
        await bot.logout()
        await service.stop()
        report.callSetup = CallSetupSection(method: method, calls: calls, toAgentConnected: LatencySummary(milliseconds: toAgent),
                                            agentToMedia: LatencySummary(milliseconds: toMedia),
                                            agentToFirstFrame: LatencySummary(milliseconds: toFrame),
                                            total: LatencySummary(milliseconds: total), load: timer.finish())
        report.callSetup?.steps = steps.map { CallSetupStep(event: $0.key, afterAgentConnected: LatencySummary(milliseconds: $0.value)) }
            .sorted { ($0.afterAgentConnected?.p50 ?? 0) < ($1.afterAgentConnected?.p50 ?? 0) }
    }

    /// The caller's events between AgentConnected and WebRtcConnected, in the order they come.
    static let steps: [VideoCallEventType] = [.JoinedRoom, .SignalingConnected, .SignalingRegistered, .RtcPeerConnectionCreated,
                                              .GotLocalStream, .SentOffer, .GotOffer, .SentAnswer, .GotAnswer, .GotRemoteStream,
                                              .WebRtcOnDataChannel, .WebRtcConnected]

    /// The reference service on loopback, queue entry at once and agents without a secret; its base URL.
    static func startService(iceServers: [ECVProtocol.ICEServer] = [ECVProtocol.ICEServer(urls: ["stun:127.0.0.1:3478"])])
        async throws -> (ReferenceService, String) {
        var configuration = ReferenceServiceConfiguration()
        configuration.iceServers = iceServers
        configuration.acd.queueEntryDelay = 0
        configuration.openAgents = true
        let service = try ReferenceService(configuration: configuration)
        let url = try await service.start(host: "127.0.0.1", port: 0)
        return (service, url.absoluteString.trimmingCharacters(in: CharacterSet(charactersIn: "/")))
    }
}

/// A renderer that remembers when its first frame came.
final class FirstFrame: VideoRenderer {
    private let arrived = Locked<Date?>(nil)
    var time: Date? { arrived.value }
    func renderFrame(_ frame: VideoFrame?) { arrived.withLock { if $0 == nil { $0 = Date() } } }

    func wait(timeout: Duration) async -> Date? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let time { return time }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return nil
    }
}
