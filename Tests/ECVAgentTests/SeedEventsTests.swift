import ECV
import ECVAgent
import ECVTestSupport
import GLibCore
import Testing
import WebRTC

/// The seed's events no other test asserts (issue #39, item 8), each where the guides say it
/// comes: `None`, the offer/answer events on both sides, `WebRtcOnDataChannel`,
/// `RemoteAudioUnmuted`, `WebRtcRenegotiationNeeded` and `TransferCancelled`.
@Suite(.serialized) struct SeedEventsTests {
    /// The caller as the answerer (the agent joined the room first): `None` before `Init`,
    /// `GotOffer`, `SentAnswer`, the agent's text channel as `WebRtcOnDataChannel`; the agent's
    /// audio unmuted; a direct transfer the agent cancels is `TransferPending`, then
    /// `TransferCancelled`, and the call goes on with media.
    @Test func answererSideEventsAndACancelledTransfer() async throws {
        let backend = try await Backend.start()
        let alice = try await backend.agent(name: "Alice")
        // Bob is offered the transfer and leaves it waiting (no auto-accept) until Alice cancels.
        let bob = try await backend.agent(name: "Bob", queues: ["Billing"]) { $0.autoAccept = false }
        let sdk = try backend.sdk()
        let log = EventLog(sdk)
        let c = try await connectedCall(sdk, log, agent: alice)
        let rtcId = c.call.rtcId
        let first = try #require(log.pairs.first { $0.0.type == .Init })
        #expect(first.1.type == .None && first.1.createdAt.timeIntervalSince1970 == 0, "Init's last event is None")
        #expect(isOrderedSubsequence([.GotOffer, .SentAnswer, .WebRtcConnected], of: log.types(rtcId)), "\(log.types(rtcId))")
        #expect(log.first(.WebRtcOnDataChannel, rtcId)?.detail == DataChannelConfig.defaultTextChannel.label)
        #expect(log.count(.SentOffer, rtcId) == 0 && log.count(.GotAnswer, rtcId) == 0)

        try c.agentCall.sendStatus(media: .audio, muted: true)
        try c.agentCall.sendStatus(media: .audio, muted: false)
        #expect(try await log.wait(for: .RemoteAudioUnmuted, rtcId).detail == "STATUS|AUDIO|UNMUTED|\(rtcId)")
        #expect(isOrderedSubsequence([.RemoteAudioMuted, .RemoteAudioUnmuted], of: log.types(rtcId)))

        let bobId = try #require(bob.agentId)
        try await c.agentCall.transfer(to: .agent(bobId))
        #expect(try await log.wait(for: .TransferPending, rtcId).data["targetType"] == "agent")
        try await c.agentCall.cancelTransfer()
        _ = try await log.wait(for: .TransferCancelled, rtcId)
        #expect(!c.call.isEnded && log.count(.TransferCompleted, rtcId) == 0, "the call goes on as before")
        let framesAfter = c.view.count
        try await eventually(.seconds(10), "media after the cancelled transfer") { c.view.count > framesAfter + 5 }
        c.call.hangup()
        _ = try await log.wait(for: .CallEnded, rtcId)
        await alice.logout()
        await bob.logout()
        await backend.close()
    }

    /// The caller as the offerer: it joins the room before the agent, sends the offer
    /// (`SentOffer`) and gets the agent's answer (`GotAnswer`). Its peer rebuilt once connected
    /// (what the session does after a failure) must negotiate again: `WebRtcRenegotiationNeeded`,
    /// a second offer and answer, and media again.
    @Test func offererSideEventsAndRenegotiation() async throws {
        let backend = try await Backend.start()
        let agent = try await backend.agent { $0.joinsRooms = false }
        let sdk = try backend.sdk()
        let log = EventLog(sdk)
        let call = try #require(await sdk.createVideoCall())
        await call.start(dialCallParameters: DialCallParameters(callerName: "Jane"))
        _ = try await log.wait(for: .AgentConnected, call.rtcId)
        let connection = try #require(call.connect(parameters: ConnectParameters(videoWidth: 320, videoHeight: 240, noAudioProcessing: true)))
        await connection.startRoom()
        _ = try await log.wait(for: .SentOffer, call.rtcId)
        let agentCall = try #require(agent.call(rtcId: call.rtcId))
        await agentCall.start()
        _ = try await log.wait(for: .GotAnswer, call.rtcId)
        _ = try await log.wait(for: .WebRtcConnected, call.rtcId)
        #expect(isOrderedSubsequence([.SentOffer, .GotAnswer, .WebRtcConnected], of: log.types(call.rtcId)), "\(log.types(call.rtcId))")
        #expect(log.count(.GotOffer, call.rtcId) == 0 && log.count(.SentAnswer, call.rtcId) == 0)
        #expect(log.count(.WebRtcOnDataChannel, call.rtcId) == 0, "the caller opened the text channel itself")

        #expect(log.count(.WebRtcRenegotiationNeeded, call.rtcId) == 0, "not for the first negotiation")
        let pictures = CountingRenderer()
        connection.remoteVideoRenderer = pictures
        try await eventually(.seconds(10), "the agent's picture") { pictures.count > 3 }
        try await #require(connection.peerConnection).rebuild()
        _ = try await log.wait(for: .WebRtcRenegotiationNeeded, call.rtcId)
        try await eventually(.seconds(10), "a second offer answered") { log.count(.GotAnswer, call.rtcId) == 2 }
        let before = pictures.count
        try await eventually(.seconds(10), "the agent's picture after the rebuild") { pictures.count > before + 5 }
        call.hangup()
        _ = try await log.wait(for: .CallEnded, call.rtcId)
        await agent.logout()
        await backend.close()
    }
}
