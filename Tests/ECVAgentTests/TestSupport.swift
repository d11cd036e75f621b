import ECV
import ECVAgent
import ECVProtocol
import ECVService
import Foundation
import GStreamer
import Testing
import MediaPipeline

enum TestRuntime {
    static let ready: Void = {
        LeakTracer.enableBeforeInitialization()
        try! GStreamerRuntime.ensureInitialized()
        Logger.setLevel(logLevel: .warn)
    }()
}

/// A reference service on loopback plus an SDK pointed at it, torn down by `close()`.
struct Backend {
    let service: ReferenceService
    let url: String

    static func start(version: BackendVersion = .v1_75, configure: (inout ReferenceServiceConfiguration) -> Void = { _ in })
        async throws -> Backend {
        _ = TestRuntime.ready
        var configuration = ReferenceServiceConfiguration(backendVersion: version)
        configuration.queues = ["default", "Billing", "TechSupport"]
        configuration.acd.queueEntryDelay = 0
        // Loopback calls connect on host candidates; the entry only satisfies the SDK's rule.
        configuration.iceServers = [ECVProtocol.ICEServer(urls: ["stun:127.0.0.1:3478"])]
        configure(&configuration)
        let service = try ReferenceService(configuration: configuration)
        let url = try await service.start(host: "127.0.0.1", port: 0)
        var text = url.absoluteString
        if text.hasSuffix("/") { text.removeLast() }
        return Backend(service: service, url: text)
    }

    func sdk(useQueueSocket: Bool = true, useQueueInfo: Bool = false, delay: Int = 200,
             configure: (inout ECVSdkConfiguration) -> Void = { _ in }) -> ECVSdk {
        var configuration = ECVSdkConfiguration(name: "test", serviceUrl: url, useQueueSocket: useQueueSocket,
                                                waitForRoomIntervalDelay: delay, useQueueInfo: useQueueInfo,
                                                queueInfoIntervalDelay: delay)
        configure(&configuration)
        return ECVSdk(config: configuration)
    }

    /// A connected, ready agent bot.
    func agent(name: String = "Alice", queues: [String] = ["default"],
               configure: (inout AgentBotConfiguration) -> Void = { _ in }) async throws -> AgentBot {
        var configuration = AgentBotConfiguration(serviceUrl: url, name: name, queues: queues,
                                                  parameters: ConnectParameters(videoWidth: 320, videoHeight: 240, noAudioProcessing: true))
        configure(&configuration)
        let bot = AgentBot(configuration: configuration)
        try await bot.connect()
        try await bot.ready()
        return bot
    }

    func close() async { await service.stop() }
}

/// Every event of every call of an SDK, in delivery order.
final class EventLog: Sendable {
    private let entries = Locked<[(rtcId: String, event: VideoCallEvent, last: VideoCallEvent)]>([])

    init(_ sdk: ECVSdk) {
        sdk.modules.onCallEvent.append { [entries] call, event, last in
            // Keep value-like payloads only: holding a remote stream or channel would keep GStreamer
            // objects alive for the whole test and hide real leaks behind the log's own.
            entries.withLock { $0.append((call.rtcId, EventLog.valueOnly(event), EventLog.valueOnly(last))) }
        }
    }

    static func valueOnly(_ event: VideoCallEvent) -> VideoCallEvent {
        let kept = event.objData is QueueInfo || event.objData is ErrorObject || event.objData is [String: any Sendable]
        return VideoCallEvent(type: event.type, detail: event.detail, objData: kept ? event.objData : nil,
                              data: event.data, createdAt: event.createdAt)
    }

    func events(_ rtcId: String? = nil) -> [VideoCallEvent] {
        entries.value.filter { rtcId == nil || $0.rtcId == rtcId }.map(\.event)
    }
    func types(_ rtcId: String? = nil) -> [VideoCallEventType] { events(rtcId).map(\.type) }
    func first(_ type: VideoCallEventType, _ rtcId: String? = nil) -> VideoCallEvent? { events(rtcId).first { $0.type == type } }
    func count(_ type: VideoCallEventType, _ rtcId: String? = nil) -> Int { events(rtcId).filter { $0.type == type }.count }
    var pairs: [(VideoCallEvent, VideoCallEvent)] { entries.value.map { ($0.event, $0.last) } }

    /// Waits until an event of `type` was delivered (for `rtcId`, when given).
    func wait(for type: VideoCallEventType, _ rtcId: String? = nil, timeout: Duration = .seconds(15)) async throws -> VideoCallEvent {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let event = first(type, rtcId) { return event }
            try await Task.sleep(for: .milliseconds(25))
        }
        throw TestFailure("no \(type) within \(timeout); saw \(types(rtcId).map(\.rawValue))")
    }
}

struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Holds true for `types` appearing in `sequence` in this order (other events may come between).
func isOrderedSubsequence(_ types: [VideoCallEventType], of sequence: [VideoCallEventType]) -> Bool {
    var remaining = types[...]
    for type in sequence where type == remaining.first { remaining = remaining.dropFirst() }
    return remaining.isEmpty
}

/// A renderer that counts frames and keeps the last one.
final class CountingRenderer: VideoRenderer {
    private let state = Locked<(count: Int, last: VideoFrame?, size: (Int, Int)?)>((0, nil, nil))
    var count: Int { state.value.count }
    var last: VideoFrame? { state.value.last }
    var size: (Int, Int)? { state.value.size }
    func setSize(width: Int, height: Int) { state.withLock { $0.size = (width, height) } }
    func renderFrame(_ frame: VideoFrame?) { state.withLock { $0.count += 1; $0.last = frame } }
}

func eventually(_ timeout: Duration = .seconds(10), _ what: String, _ condition: @Sendable () async -> Bool) async throws {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if await condition() { return }
        try await Task.sleep(for: .milliseconds(50))
    }
    throw TestFailure("not true within \(timeout): \(what)")
}

/// Dials a call on `sdk` and connects its media once an agent picks up.
func placeCall(_ sdk: ECVSdk, log: EventLog, parameters: DialCallParameters = DialCallParameters(callerName: "Jane"),
               connect: ConnectParameters = ConnectParameters(videoWidth: 320, videoHeight: 240, noAudioProcessing: true),
               renderer: CountingRenderer? = nil) async throws -> VideoCall {
    let call = try #require(await sdk.createVideoCall())
    await call.start(dialCallParameters: parameters)
    _ = try await log.wait(for: .AgentConnected, call.rtcId)
    let connection = try #require(call.connect(parameters: connect))
    connection.remoteVideoRenderer = renderer
    await connection.startRoom()
    return call
}

func processThreadCount() -> Int {
    let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
    let line = status.split(separator: "\n").first { $0.hasPrefix("Threads:") }
    return Int(line?.split(separator: "\t").last?.trimmingCharacters(in: .whitespaces) ?? "") ?? -1
}

/// Mean red, green and blue of an RGBA frame (0…255), sampling every 7th pixel.
func meanColor(_ frame: VideoFrame) -> (red: Double, green: Double, blue: Double) {
    var sums = (0.0, 0.0, 0.0), count = 0.0
    let stride = frame.info.strides.first ?? frame.width * 4
    for y in Swift.stride(from: 0, to: frame.height, by: 7) {
        for x in Swift.stride(from: 0, to: frame.width, by: 7) {
            let offset = y * stride + x * 4
            guard offset + 2 < frame.data.count else { continue }
            sums.0 += Double(frame.data[offset]); sums.1 += Double(frame.data[offset + 1]); sums.2 += Double(frame.data[offset + 2])
            count += 1
        }
    }
    return count > 0 ? (sums.0 / count, sums.1 / count, sums.2 / count) : (0, 0, 0)
}

/// The last caller frame an agent call saw.
final class CallerView: Sendable {
    private let frame = Locked<VideoFrame?>(nil)
    private let frames = Locked(0)
    init(_ call: AgentCall) {
        call.onCallerFrame { [frame, frames] next in
            frame.value = next
            frames.withLock { $0 += 1 }
        }
    }
    var last: VideoFrame? { frame.value }
    var count: Int { frames.value }
    var color: (red: Double, green: Double, blue: Double)? { last.map(meanColor) }
    var isBlack: Bool { color.map { $0.red < 30 && $0.green < 30 && $0.blue < 30 } ?? false }
}

/// A caller connected to `agent`, with the agent's side of the call.
struct ConnectedCall {
    let call: VideoCall
    let connection: WebRtcConnection
    let agentCall: AgentCall
    let view: CallerView
}

func connectedCall(_ sdk: ECVSdk, _ log: EventLog, agent: AgentBot, video: VideoInputs = .single(.testPattern(pattern: "white")),
                   torch: (any FlashlightHandler)? = nil, holdSideEffects: Bool = true) async throws -> ConnectedCall {
    let call = try #require(await sdk.createVideoCall())
    await call.start(dialCallParameters: DialCallParameters(callerName: "Jane"))
    _ = try await log.wait(for: .AgentConnected, call.rtcId)
    let connection = try #require(call.connect(parameters: ConnectParameters(autoHandleHoldSideEffects: holdSideEffects,
                                                                             videoWidth: 320, videoHeight: 240, noAudioProcessing: true)))
    connection.videoSource = video
    connection.flashlightHandler = torch
    await connection.startRoom()
    _ = try await log.wait(for: .TextChannelConnected, call.rtcId)
    try await eventually(.seconds(10), "the agent has the call") { agent.call(rtcId: call.rtcId) != nil }
    let agentCall = try #require(agent.call(rtcId: call.rtcId))
    let view = CallerView(agentCall)
    try await eventually(.seconds(10), "the agent's text channel is open and caller frames arrive") {
        agentCall.eventHistory.contains(.textChannelOpen) && view.count > 5
    }
    return ConnectedCall(call: call, connection: connection, agentCall: agentCall, view: view)
}
