import ECV
import ECVAgent
import ECVTestSupport
import GLibCore
import Testing

/// The call controls go through one order: whatever tasks call them, the media, the last events
/// and the agent's last STATUS end in agreement.
@Suite(.serialized) struct ControlOrderTests {
    @Test func aThousandAlternatingMutesFromSeveralTasksAgree() async throws {
        let backend = try await Backend.start()
        let agent = try await backend.agent()
        let sdk = try backend.sdk()
        let log = EventLog(sdk)
        let c = try await connectedCall(sdk, log, agent: agent)
        let connection = c.connection
        // Four tasks, 250 calls each, alternating audio and video with random states.
        await withTaskGroup(of: Void.self) { group in
            for task in 0..<4 {
                group.addTask {
                    for step in 0..<250 {
                        let enabled = Bool.random()
                        if (task + step) % 2 == 0 { connection.setAudioEnabled(state: enabled) } else { connection.setVideoEnabled(state: enabled) }
                    }
                }
            }
        }
        await connection.controlsApplied()
        let audioOn = connection.localStream.isAudioEnabled, videoOn = connection.localStream.isVideoEnabled
        let media = try #require(await connection.peerConnection?.media)
        #expect(media.isAudioMuted == !audioOn && media.isVideoMuted == !videoOn, "the graph is as the state says")

        let rtcId = c.call.rtcId
        try await eventually(.seconds(10), "every control's event delivered") {
            log.events(rtcId).filter { [.AudioMuted, .AudioUnmuted, .VideoMuted, .VideoUnmuted].contains($0.type) }.count == 1000
        }
        let events = log.types(rtcId)
        #expect(events.last { $0 == .AudioMuted || $0 == .AudioUnmuted } == (audioOn ? .AudioUnmuted : .AudioMuted))
        #expect(events.last { $0 == .VideoMuted || $0 == .VideoUnmuted } == (videoOn ? .VideoUnmuted : .VideoMuted))

        @Sendable func statuses() -> [(media: DataChannelCommand.MediaKind, muted: Bool)] {
            c.agentCall.eventHistory.compactMap { if case .callerStatus(let media, let muted) = $0 { (media, muted) } else { nil } }
        }
        try await eventually(.seconds(20), "the agent got all 1000 STATUS messages") { statuses().count == 1000 }
        #expect(statuses().last { $0.media == .audio }?.muted == !audioOn, "the agent's last audio STATUS")
        #expect(statuses().last { $0.media == .video }?.muted == !videoOn, "the agent's last video STATUS")
        c.call.hangup()
        _ = try await log.wait(for: .CallEnded, rtcId)
        await agent.logout()
        await backend.close()
    }
}
