import ECV
import ECVAgent
import ECVProtocol
import ECVService
import Foundation
import GStreamer
import Testing
@_exported import MediaTestSupport
import GLibCore

package enum TestRuntime {
    package static let ready: Void = {
        LeakTracer.enableBeforeInitialization()
        try! GStreamerRuntime.ensureInitialized()
        Logger.setLevel(logLevel: .warn)
    }()
}

/// A reference service on loopback (or on `host`, e.g. a network lab's veth address) plus an SDK
/// pointed at it, torn down by `close()`.
package struct Backend: Sendable {
    package let service: ReferenceService
    package let url: String

    package static func start(version: BackendVersion = .v1_75, host: String = "127.0.0.1",
                             configure: (inout ReferenceServiceConfiguration) -> Void = { _ in })
        async throws -> Backend {
        _ = TestRuntime.ready
        var configuration = ReferenceServiceConfiguration(backendVersion: version)
        configuration.queues = ["default", "Billing", "TechSupport"]
        configuration.acd.queueEntryDelay = 0
        configuration.openAgents = true
        // Loopback calls connect on host candidates; the entry only satisfies the SDK's rule.
        configuration.iceServers = [ECVProtocol.ICEServer(urls: ["stun:127.0.0.1:3478"])]
        configure(&configuration)
        let service = try ReferenceService(configuration: configuration)
        let url = try await service.start(host: host, port: 0)
        var text = url.absoluteString
        if text.hasSuffix("/") { text.removeLast() }
        return Backend(service: service, url: text)
    }

    package func sdk(useQueueSocket: Bool = true, useQueueInfo: Bool = false, delay: Int = 200,
             configure: (inout ECVSdkConfiguration) -> Void = { _ in }) throws -> ECVSdk {
        var configuration = ECVSdkConfiguration(name: "test", serviceUrl: url, useQueueSocket: useQueueSocket,
                                                waitForRoomIntervalDelay: delay, useQueueInfo: useQueueInfo,
                                                queueInfoIntervalDelay: delay)
        configure(&configuration)
        return try ECVSdk(config: configuration)
    }

    /// A connected, ready agent bot.
    package func agent(name: String = "Alice", queues: [String] = ["default"],
               configure: (inout AgentBotConfiguration) -> Void = { _ in }) async throws -> AgentBot {
        var configuration = AgentBotConfiguration(serviceUrl: url, name: name, queues: queues,
                                                  parameters: ConnectParameters(videoWidth: 320, videoHeight: 240, noAudioProcessing: true))
        configure(&configuration)
        let bot = try AgentBot(configuration: configuration)
        try await bot.connect()
        try await bot.ready()
        return bot
    }

    package func close() async { await service.stop() }
}

/// Every event of every call of an SDK, in delivery order.
package final class EventLog: Sendable {
    private let entries = Locked<[(rtcId: String, event: VideoCallEvent, last: VideoCallEvent)]>([])

    package init(_ sdk: ECVSdk) {
        sdk.modules.onCallEvent.append { [entries] call, event, last in
            // Keep value-like payloads only: holding a channel or the peer would keep GStreamer
            // objects alive for the whole test and hide real leaks behind the log's own. A
            // MediaStream holds its connection weakly, so it is kept.
            entries.withLock { $0.append((call.rtcId, EventLog.valueOnly(event), EventLog.valueOnly(last))) }
        }
    }

    package static func valueOnly(_ event: VideoCallEvent) -> VideoCallEvent {
        let kept = event.objData is QueueInfo || event.objData is ErrorObject || event.objData is [String: any Sendable]
            || event.objData is MediaStream
        return VideoCallEvent(type: event.type, detail: event.detail, objData: kept ? event.objData : nil,
                              data: event.data, createdAt: event.createdAt)
    }

    package func events(_ rtcId: String? = nil) -> [VideoCallEvent] {
        entries.value.filter { rtcId == nil || $0.rtcId == rtcId }.map(\.event)
    }
    package func types(_ rtcId: String? = nil) -> [VideoCallEventType] { events(rtcId).map(\.type) }
    package func first(_ type: VideoCallEventType, _ rtcId: String? = nil) -> VideoCallEvent? { events(rtcId).first { $0.type == type } }
    package func count(_ type: VideoCallEventType, _ rtcId: String? = nil) -> Int { events(rtcId).filter { $0.type == type }.count }
    package var pairs: [(VideoCallEvent, VideoCallEvent)] { entries.value.map { ($0.event, $0.last) } }

    /// Waits until an event of `type` was delivered (for `rtcId`, when given).
    package func wait(for type: VideoCallEventType, _ rtcId: String? = nil, timeout: Duration = .seconds(15)) async throws -> VideoCallEvent {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let event = first(type, rtcId) { return event }
            try await Task.sleep(for: .milliseconds(25))
        }
        throw TestFailure("no \(type) within \(timeout); saw \(types(rtcId).map(\.rawValue))")
    }
}


/// Holds true for `types` appearing in `sequence` in this order (other events may come between).
package func isOrderedSubsequence(_ types: [VideoCallEventType], of sequence: [VideoCallEventType]) -> Bool {
    var remaining = types[...]
    for type in sequence where type == remaining.first { remaining = remaining.dropFirst() }
    return remaining.isEmpty
}

/// A renderer that counts frames and keeps the last one.
package final class CountingRenderer: VideoRenderer {
    package init() {}
    private let state = Locked<(count: Int, last: VideoFrame?, size: (Int, Int)?)>((0, nil, nil))
    package var count: Int { state.value.count }
    package var last: VideoFrame? { state.value.last }
    package var size: (Int, Int)? { state.value.size }
    package func setSize(width: Int, height: Int) { state.withLock { $0.size = (width, height) } }
    package func renderFrame(_ frame: VideoFrame?) { state.withLock { $0.count += 1; $0.last = frame } }
}

/// Dials a call on `sdk` and connects its media once an agent picks up.
package func placeCall(_ sdk: ECVSdk, log: EventLog, parameters: DialCallParameters = DialCallParameters(callerName: "Jane"),
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

