import ECV
import ECVAgent
import ECVTestSupport
import GLibCore
import GStreamer
import MediaPipeline
import Testing

/// The last caller frame an agent call saw.
final class CallerView: Sendable {
    private let frame = Locked<VideoFrame?>(nil)
    private let frames = Locked(0)
    init(_ call: AgentCall) {
        call.onCallerFrame { [frame, frames] next in
            frame.withLock { $0 = next }
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
                   torch: (any FlashlightHandler)? = nil, holdSideEffects: Bool = true,
                   parameters: ConnectParameters? = nil) async throws -> ConnectedCall {
    let call = try #require(await sdk.createVideoCall())
    await call.start(dialCallParameters: DialCallParameters(callerName: "Jane"))
    _ = try await log.wait(for: .AgentConnected, call.rtcId)
    let connection = try #require(call.connect(parameters: parameters ?? ConnectParameters(autoHandleHoldSideEffects: holdSideEffects,
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
