import ECV
import ECVAgent
import ECVProtocol
import ECVService
import ECVTestSupport
import Foundation
import GLibCore
import MediaTestSupport
import Testing

/// Reconnection at every layer (docs/protocol.md §9), on loopback with real sockets: a front that
/// drops connections or loses an answer, the reference service dropping its sockets.
@Suite(.serialized) struct ReconnectionTests {
    @Test func aRequestWhoseConnectionsAreDroppedIsRetriedThenGivesAClearError() async throws {
        let backend = try await Backend.start()
        let front = try FlakyFront(upstream: backend.url, ["--drop-first", "2"])
        defer { front.stop() }
        let sdk = try ECVSdk(config: ECVSdkConfiguration(name: "retry", serviceUrl: try await front.url()))
        let call = try #require(await sdk.createVideoCall())
        #expect(!call.rtcId.isEmpty && call.lastError.name == .NO_ERROR, "GetRtcId retried: \(call.lastError)")
        #expect(front.output.components(separatedBy: "dropped a connection").count - 1 == 2)

        // A front that never lets a request through: retried within the window, then one error.
        let wall = try FlakyFront(upstream: backend.url, ["--drop-first", "1000"])
        defer { wall.stop() }
        var configuration = ECVSdkConfiguration(name: "wall", serviceUrl: try await wall.url())
        configuration.reconnectWindowMs = 600
        let refused = try #require(await (try ECVSdk(config: configuration)).createVideoCall())
        #expect(refused.lastError.name == .GET_RTC_ID_FAILED)
        #expect(refused.lastError.message.contains("gave up after"), "\(refused.lastError.message)")
        await backend.close()
    }

    @Test func aServiceThatComesBackOnItsPortAnswersTheRetriedRequest() async throws {
        // A port that was just free: nothing listens while the SDK starts asking.
        let probe = try await Backend.start()
        let port = try #require(URLComponents(string: probe.url)?.port)
        await probe.close()
        var configuration = ECVSdkConfiguration(name: "restart", serviceUrl: probe.url)
        configuration.reconnectWindowMs = 8000
        let sdk = try ECVSdk(config: configuration)
        let asking = Task { await sdk.createVideoCall() }
        // The outage itself: the service is down for 700 ms, refusing every attempt meanwhile.
        try await Task.sleep(for: .milliseconds(700))
        let restarted = try ReferenceService(configuration: ReferenceServiceConfiguration())
        _ = try await restarted.start(host: "127.0.0.1", port: UInt16(port))
        let call = try #require(await asking.value)
        #expect(!call.rtcId.isEmpty && call.lastError.name == .NO_ERROR, "\(call.lastError)")
        #expect(restarted.log.entries.contains { $0.message.hasPrefix("GetRtcId → \(call.rtcId)") })
        await restarted.stop()
    }

    @Test func aDialExWhoseAnswerWasLostIsRetriedWithoutASecondCall() async throws {
        let backend = try await Backend.start()
        let agent = try await backend.agent { $0.joinsRooms = false }
        let front = try FlakyFront(upstream: backend.url, ["--lose-response", "POST /api/DialEx"])
        defer { front.stop() }
        let sdk = try ECVSdk(config: ECVSdkConfiguration(name: "dial", serviceUrl: try await front.url()))
        let log = EventLog(sdk)
        let call = try #require(await sdk.createVideoCall())
        await call.start()
        _ = try await log.wait(for: .AgentConnected, call.rtcId)
        #expect(front.output.contains("answer swallowed"), "the first answer was lost: \(front.output)")
        #expect(backend.service.script.dialCount(rtcId: call.rtcId) == 2, "the DialEx reached the service twice")
        #expect(log.count(.DialSuccess, call.rtcId) == 1 && log.count(.Error, call.rtcId) == 0, "\(log.types(call.rtcId))")
        #expect(backend.service.acd.snapshot().interactions.filter { $0.rtcId == call.rtcId }.count == 1, "one call")
        #expect(backend.service.log.entries(rtcId: call.rtcId).contains { $0.message.contains("first answer replayed") })
        #expect(agent.calls.count == 1)
        call.hangup()
        _ = try await log.wait(for: .CallEnded, call.rtcId)
        await agent.logout()
        await backend.close()
    }

    @Test func aJoinWhoseAnswerWasLostGetsItsSlotBack() async throws {
        let backend = try await Backend.start()
        let agent = try await backend.agent()
        let front = try FlakyFront(upstream: backend.url, ["--lose-response", "POST /join/"])
        defer { front.stop() }
        let frontURL = try await front.url()
        let sdk = try backend.sdk { $0.webrtcUrl = frontURL }
        let log = EventLog(sdk)
        let call = try await placeCall(sdk, log: log)
        _ = try await log.wait(for: .WebRtcConnected, call.rtcId)
        #expect(front.output.contains("answer swallowed"), "the first join answer was lost: \(front.output)")
        let joins = backend.service.log.entries(rtcId: call.rtcId).filter { $0.message.contains("joined room") && $0.message.contains("caller") }
        #expect(joins.count == 2, "joined twice, one slot: \(joins.map(\.message))")
        #expect(Set(joins.map { $0.message.prefix(8) }).count == 1, "the same client both times")
        #expect(log.count(.JoinedRoom, call.rtcId) == 1 && log.count(.Error, call.rtcId) == 0, "\(log.types(call.rtcId))")
        call.hangup()
        _ = try await log.wait(for: .CallEnded, call.rtcId)
        await agent.logout()
        await backend.close()
    }

    /// The first connect of a call's collider socket fails on the way (here: closed at once, as a
    /// lossy path's lost SYNs and upgrade end in a connect timeout) and is made again within the
    /// window instead of ending the call (it ended it before: one call in five at 20 % loss).
    @Test func aFailedFirstColliderConnectIsRetried() async throws {
        let backend = try await Backend.start()
        let agent = try await backend.agent()
        let front = try FlakyFront(upstream: backend.url, ["--drop-first", "2"])
        defer { front.stop() }
        let sdk = try ECVSdk(config: ECVSdkConfiguration(name: "collider retry", serviceUrl: backend.url, webrtcUrl: nil,
                                                         signalingUrl: try await front.url(), useQueueSocket: true))
        let log = EventLog(sdk)
        let call = try await placeCall(sdk, log: log)
        _ = try await log.wait(for: .WebRtcConnected, call.rtcId)
        #expect(front.output.components(separatedBy: "dropped a connection").count - 1 == 2, "\(front.output)")
        #expect(log.count(.SignalingConnected, call.rtcId) == 1 && log.count(.Error, call.rtcId) == 0, "\(log.types(call.rtcId))")
        call.hangup()
        _ = try await log.wait(for: .CallEnded, call.rtcId)
        await agent.logout()
        await backend.close()
    }

    @Test func aDroppedSignalingSocketReconnectsAndTheMediaKeepsFlowing() async throws {
        let backend = try await Backend.start()
        let agentFrames = Locked(0)
        let agent = try await backend.agent()
        let sdk = try backend.sdk()
        let log = EventLog(sdk)
        let renderer = CountingRenderer()
        let call = try await placeCall(sdk, log: log, renderer: renderer)
        _ = try await log.wait(for: .WebRtcConnected, call.rtcId)
        let agentCall = try #require(agent.call(rtcId: call.rtcId))
        agentCall.onCallerFrame { _ in agentFrames.withLock { $0 += 1 } }
        try await eventually(.seconds(10), "frames both ways") { renderer.count > 10 && agentFrames.value > 10 }

        #expect(backend.service.script.dropRoomSockets(rtcId: call.rtcId) == 2, "both collider sockets dropped")
        let reconnected = try await log.wait(for: .Reconnected, call.rtcId)
        #expect(reconnected.detail == ReconnectingLink.signaling)
        #expect(log.first(.Reconnecting, call.rtcId)?.detail == ReconnectingLink.signaling)
        let (callerMark, agentMark) = (renderer.count, agentFrames.value)
        try await eventually(.seconds(10), "frames after the reconnection") {
            renderer.count > callerMark + 30 && agentFrames.value > agentMark + 30
        }
        try await eventually(.seconds(10), "both re-registered") {
            backend.service.log.entries(rtcId: call.rtcId).filter { $0.message.contains("registered in room") }.count >= 4
        }
        #expect(!call.isEnded && log.count(.Error, call.rtcId) == 0, "\(log.types(call.rtcId))")
        #expect(agent.call(rtcId: call.rtcId) != nil, "the agent's call goes on too")
        // Signaling works again: a bye through the new sockets ends the call on the agent's side.
        call.hangup()
        _ = try await log.wait(for: .CallEnded, call.rtcId)
        try await eventually(.seconds(10), "the agent's call over") { agent.call(rtcId: call.rtcId) == nil }
        #expect(log.count(.CallEnded, call.rtcId) == 1)
        await agent.logout()
        await backend.close()
    }

    @Test func aDroppedQueueSocketReconnectsAndTheCallerStillGetsItsAgent() async throws {
        let backend = try await Backend.start()
        let sdk = try backend.sdk()
        let log = EventLog(sdk)
        let call = try #require(await sdk.createVideoCall())
        await call.start()
        try await eventually(.seconds(5), "queue socket attached") { backend.service.queueSocketRtcIds.contains(call.rtcId) }
        #expect(backend.service.script.dropQueueSocket(rtcId: call.rtcId))
        let reconnected = try await log.wait(for: .Reconnected, call.rtcId)
        #expect(reconnected.detail == ReconnectingLink.queueSocket)
        try await eventually(.seconds(5), "attached again") { backend.service.queueSocketRtcIds.contains(call.rtcId) }

        // The agent arrives after the gap: its push comes on the new socket.
        let agent = try await backend.agent { $0.joinsRooms = false }
        let connected = try await log.wait(for: .AgentConnected, call.rtcId)
        #expect(connected.data["agentName"] == "Alice")
        #expect(!call.isEnded && log.count(.Error, call.rtcId) == 0, "\(log.types(call.rtcId))")
        #expect(isOrderedSubsequence([.OnQueue, .Reconnecting, .Reconnected, .AgentConnected], of: log.types(call.rtcId)))
        call.hangup()
        _ = try await log.wait(for: .CallEnded, call.rtcId)
        await agent.logout()
        await backend.close()
    }
}

/// `body`'s value, or a failure when it takes longer than `limit`.
func withDeadline<T: Sendable>(_ limit: Duration, _ body: @escaping @Sendable () async -> T) async throws -> T {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { await body() }
        group.addTask { try await Task.sleep(for: limit); return nil }
        defer { group.cancelAll() }
        guard let value = try await group.next() ?? nil else { throw TestFailure("no value within \(limit)") }
        return value
    }
}

/// `Tests/Interop/flaky_front.py` in front of a service: real TCP that fails on purpose.
// @unchecked Sendable: `process` is configured and started in init, then only read or signalled
// (which Foundation's Process allows from any thread); the output is behind `Locked`.
final class FlakyFront: @unchecked Sendable {
    private let process = Process()
    private let collected = Locked("")

    init(upstream: String, _ arguments: [String]) throws {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Interop/flaky_front.py")
        let hostPort = upstream.replacingOccurrences(of: "http://", with: "")
        // The interpreter itself (not a shim that forks it), so stopping the process stops the front.
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = [script.path, "--upstream", hostPort] + arguments
        process.standardError = FileHandle.nullDevice
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        PipeReader.collect(out.fileHandleForReading, into: collected)
    }

    var output: String { collected.value }

    /// The front's base URL, once it listens.
    func url() async throws -> String {
        try await eventually(.seconds(10), "the front listening") { self.output.contains("listening ") }
        let line = output.split(separator: "\n").first { $0.hasPrefix("listening ") } ?? ""
        return "http://127.0.0.1:" + (line.split(separator: " ").last.map(String.init) ?? "0")
    }

    func stop() {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }
}
