import ECV
import ECVAgent
import ECVProtocol
import Foundation
import GLibCore
import GStreamer
import MediaTestSupport
import Testing

/// The issue's "the service was killed mid-call": an `ecv serve` child killed with SIGKILL. The
/// media runs peer to peer, so it keeps flowing while both sides try to reconnect; a service
/// that does not come back ends the call once, cleanly, with no spurious `WebRtcConnected`.
@Suite(.serialized) struct ServiceKillTests {
    /// `ecv serve` on a free loopback port, and its base URL.
    static func serve() async throws -> (RunningECV, String) {
        let serve = try RunningECV(["serve", "--open-agents", "--port", "0"])
        try await eventually(.seconds(20), "the banner") { serve.stdout.contains("listening on loopback only") }
        let banner = serve.stdout
        let port = try #require(banner.range(of: #"listening on 127\.0\.0\.1:(\d+)"#, options: .regularExpression)
            .flatMap { banner[$0].split(separator: ":").last.map(String.init) }.flatMap(UInt16.init))
        return (serve, "http://127.0.0.1:\(port)")
    }

    /// Every event of `sdk`'s calls with the time it came. Type and detail only: an event's
    /// objData (the connection) would keep the call alive via the SDK.
    static func recordEvents(of sdk: ECVSdk) -> Locked<[(Seen, ContinuousClock.Instant)]> {
        let events = Locked<[(Seen, ContinuousClock.Instant)]>([])
        sdk.modules.onCallEvent.append { _, event, _ in events.withLock { $0.append((Seen(event), .now)) } }
        return events
    }

    static func callerSDK(_ base: String, reconnectWindowMs: Int) throws -> ECVSdk {
        var configuration = ECVSdkConfiguration(name: "kill", serviceUrl: base,
                                                iceServers: [ECVProtocol.ICEServer(urls: ["stun:127.0.0.1:3478"])], httpTimeoutMs: 1000)
        configuration.reconnectWindowMs = reconnectWindowMs
        return try ECVSdk(config: configuration)
    }

    @Test func killingTheServiceLeavesTheMediaFlowingThenEndsTheCallOnce() async throws {
        try GStreamerRuntime.ensureInitialized()
        let (serve, base) = try await Self.serve()
        defer { serve.stop() }
        let bot = try await startLoopbackAgent(named: "Alice", base: base)
        let sdk = try Self.callerSDK(base, reconnectWindowMs: 4000)
        let events = Self.recordEvents(of: sdk)
        let types = { events.value.map(\.0.type) }

        let call = try #require(await sdk.createVideoCall())
        await call.start()
        try await eventually(.seconds(15), "the agent") { types().contains(.AgentConnected) }
        let renderer = CountingFrames()
        let connection = try #require(call.connect(parameters: ConnectParameters(videoWidth: 320, videoHeight: 240, noAudioProcessing: true)))
        connection.remoteVideoRenderer = renderer
        await connection.startRoom()
        try await eventually(.seconds(15), "connected with frames") { types().contains(.WebRtcConnected) && renderer.count > 10 }
        let agentCall = try #require(bot.call(rtcId: call.rtcId))
        let agentEnded = Task { () -> CallEndReason? in
            // events() starts with the call's history, so an end before this subscription is in it.
            for await case .ended(let reason) in agentCall.events() { return reason }
            return nil
        }

        kill(serve.pid, SIGKILL)
        let killedAt = ContinuousClock.now
        let seenBeforeKill = events.value.count
        try await eventually(.seconds(5), "reconnecting") { types().contains(.Reconnecting) }
        let mark = renderer.count
        try await eventually(.seconds(3), "frames while the service is gone") { renderer.count > mark + 30 }
        #expect(!call.isEnded, "the media outlives the service")

        // The deadline is the bound: the reconnect window (4 s) plus one request timeout to tell
        // the service (1 s), with room for a loaded machine.
        try await eventually(.seconds(10), "the end within the window") { types().contains(.CallEnded) }
        let endedAt = try #require(events.value.first { $0.0.type == .CallEnded }?.1)
        let after = events.value.dropFirst(seenBeforeKill).map(\.0)
        #expect(after.filter { $0.type == .CallEnded }.count == 1)
        #expect(after.first { $0.type == .CallEnded }?.detail == ErrorName.SIGNALING_FAILED.rawValue, "\(after.map(\.type))")
        #expect(!after.contains { $0.type == .WebRtcConnected || $0.type == .WebRtcFailed }, "\(after.map(\.type))")
        print("service killed: media flowed on, call ended \(endedAt - killedAt) after the kill; events \(after.map(\.type.rawValue))")
        #expect(try await withDeadline(.seconds(10)) { await agentEnded.value } == AgentCall.signalingLost)
        try await Task.sleep(for: .milliseconds(300)) // late events would show here
        #expect(events.value.filter { $0.0.type == .CallEnded }.count == 1)
        await bot.logout()
    }

    @Test func aRemoteThatStaysUnreachableEndsTheCallOnceWithPeerDisconnected() async throws {
        try GStreamerRuntime.ensureInitialized()
        let (serve, base) = try await Self.serve()
        defer { serve.stop() }
        // Service and agent die together (as with `ecv demo` killed): no bye, no service to tell.
        let agent = try RunningECV(["agent", "--service-url", base, "--name", "Bot", "--width", "320", "--height", "240",
                                    "--no-audio-processing", "--json"])
        defer { agent.stop() }
        try await eventually(.seconds(20), "the agent ready") { agent.stdout.contains("ready") || agent.stdout.contains("\"state\"") }
        let sdk = try Self.callerSDK(base, reconnectWindowMs: 30_000)
        let events = Self.recordEvents(of: sdk)
        let types = { events.value.map(\.0.type) }
        let call = try #require(await sdk.createVideoCall())
        await call.start()
        try await eventually(.seconds(15), "the agent") { types().contains(.AgentConnected) }
        let renderer = CountingFrames()
        let timeout = 3000
        let connection = try #require(call.connect(parameters: ConnectParameters(connectionTimeout: timeout, videoWidth: 320,
                                                                                   videoHeight: 240, noAudioProcessing: true)))
        connection.remoteVideoRenderer = renderer
        await connection.startRoom()
        try await eventually(.seconds(15), "connected with frames") { types().contains(.WebRtcConnected) && renderer.count > 10 }

        kill(agent.pid, SIGKILL)
        kill(serve.pid, SIGKILL)
        let killedAt = ContinuousClock.now
        let seenBeforeKill = events.value.count
        let afterKill = { events.value.dropFirst(seenBeforeKill).map(\.0) }
        // The loss arms the connectionTimeout deadline: it is reported first, however ICE flaps.
        try await eventually(.seconds(20), "the loss reported") {
            afterKill().contains { $0.type == .WebRtcDisconnected || $0.type == .WebRtcFailed }
        }
        // The deadline is the bound: connectionTimeout after the loss, plus the end itself (the
        // Hangup to a service that is gone is refused at once) on a loaded machine.
        try await eventually(.milliseconds(timeout + 2500), "the end within connectionTimeout of the loss") {
            afterKill().contains { $0.type == .CallEnded }
        }
        try await Task.sleep(for: .milliseconds(300)) // late events would show here
        let after = events.value.dropFirst(seenBeforeKill)
        let ends = after.filter { $0.0.type == .CallEnded }
        #expect(ends.count == 1 && ends.first?.0.detail == CallEndReason.peerDisconnected.rawValue, "\(after.map(\.0.type))")
        #expect(after.filter { $0.0.detail == CallEndReason.peerDisconnected.rawValue }.count == 1, "PEER_DISCONNECTED once")
        #expect(!after.contains { $0.0.type == .WebRtcConnected }, "no spurious WebRtcConnected: \(after.map(\.0.type))")
        let lost = after.first { $0.0.type == .WebRtcDisconnected || $0.0.type == .WebRtcFailed }?.1
        print("remote gone: loss seen \(lost.map { "\($0 - killedAt)" } ?? "never") after the kill, ended "
              + "\(ends.first.map { "\($0.1 - killedAt)" } ?? "never") after it; events \(after.map(\.0.type.rawValue))")
    }
}

/// What a test keeps of an event.
struct Seen: Sendable {
    let type: VideoCallEventType
    let detail: String?
    init(_ event: VideoCallEvent) { (type, detail) = (event.type, event.detail) }
}

/// Counts the frames a renderer is given.
final class CountingFrames: VideoRenderer {
    private let frames = Locked(0)
    var count: Int { frames.value }
    func setSize(width: Int, height: Int) {}
    func renderFrame(_ frame: VideoFrame?) { frames.withLock { $0 += 1 } }
}

/// `body`'s value, or a failure when it takes longer than `limit`.
func withDeadline<T: Sendable>(_ limit: Duration, _ body: @escaping @Sendable () async -> T) async throws -> T {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { await body() }
        group.addTask { try await Task.sleep(for: limit); return nil }
        defer { group.cancelAll() }
        guard let value = try await group.next() ?? nil else { throw CallerKillTimeout(what: "a value within \(limit)") }
        return value
    }
}
