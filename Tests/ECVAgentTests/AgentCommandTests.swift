import ECV
import ECVAgent
import ECVProtocol
import ECVService
import ECVTestSupport
import GLibCore
import GStreamer
import MediaPipeline
import Testing

/// Each agent command's events and side effects on the caller, measured on real media.
@Suite(.serialized) struct AgentCommandTests {
    @Test func holdMutesAndRestoresWhatTheCallerHad() async throws {
        let backend = try await Backend.start()
        let agent = try await backend.agent()
        let sdk = try backend.sdk()
        let log = EventLog(sdk)
        let c = try await connectedCall(sdk, log, agent: agent)
        try await eventually(.seconds(10), "white picture at the agent") { (c.view.color?.red ?? 0) > 200 }
        c.connection.setAudioEnabled(state: false) // the caller chose to mute before the hold
        let media = try #require(await c.connection.peerConnection?.media)
        try await eventually(.seconds(5), "muted") { media.isAudioMuted }

        try c.agentCall.hold()
        _ = try await log.wait(for: .StartHold, c.call.rtcId)
        try await eventually(.seconds(10), "black frames while on hold") { c.view.isBlack && media.isVideoMuted && media.isAudioMuted }
        try c.agentCall.pickup()
        _ = try await log.wait(for: .EndHold, c.call.rtcId)
        try await eventually(.seconds(10), "picture back after pickup") { (c.view.color?.red ?? 0) > 200 }
        #expect(!media.isVideoMuted)
        #expect(media.isAudioMuted, "a caller who had muted stays muted")
        #expect(log.count(.AudioMuted, c.call.rtcId) == 1, "hold side effects are not announced as the caller's own mutes")
        c.call.hangup()
        _ = try await log.wait(for: .CallEnded, c.call.rtcId)
        await agent.logout()
        await backend.close()
    }

    @Test func holdWithoutSideEffectsOnlyEmitsEvents() async throws {
        let backend = try await Backend.start()
        let agent = try await backend.agent()
        let sdk = try backend.sdk()
        let log = EventLog(sdk)
        let c = try await connectedCall(sdk, log, agent: agent, holdSideEffects: false)
        try c.agentCall.hold()
        _ = try await log.wait(for: .StartHold, c.call.rtcId)
        let media = try #require(await c.connection.peerConnection?.media)
        let framesAtHold = c.view.count
        try await eventually(.seconds(10), "20 more caller frames at the agent during the hold") { c.view.count >= framesAtHold + 20 }
        #expect(!media.isVideoMuted && !media.isAudioMuted)
        #expect((c.view.color?.red ?? 0) > 200, "the picture keeps flowing: \(String(describing: c.view.color))")
        c.call.hangup()
        _ = try await log.wait(for: .CallEnded, c.call.rtcId)
        await agent.logout()
        await backend.close()
    }

    struct Torch: FlashlightHandler {
        let approves: Bool
        var works = true
        let switched = Locked<[Bool]>([])
        func approve(turningOn: Bool) async -> Bool { approves }
        func setTorch(on: Bool) async -> Bool {
            guard works else { return false }
            switched.withLock { $0.append(on) }
            return true
        }
    }

    /// The Turkish guide lists `FlashOn`/`FlashOff` as the torch's states: they follow an approved
    /// request the torch applied (on, then off), and never a refused one, a failing torch or no
    /// torch at all; each request is its own `FlashRequested` first.
    @Test func flashOnAndOffOnlyWhenTheTorchChanged() async throws {
        let backend = try await Backend.start()
        let agent = try await backend.agent()
        let sdk = try backend.sdk()
        let log = EventLog(sdk)
        let cases: [(torch: Torch?, reply: DataChannelCommand.FlashApproval, label: String)] = [
            (Torch(approves: true), .accepted, "approved"), (Torch(approves: false), .refused, "refused"),
            (Torch(approves: true, works: false), .unavailable, "failing torch"), (nil, .unavailable, "no torch"),
        ]
        for (torch, expected, label) in cases {
            let c = try await connectedCall(sdk, log, agent: agent, torch: torch)
            let rtcId = c.call.rtcId
            #expect(try await c.agentCall.requestFlash(true) == expected, "\(label)")
            #expect(try await c.agentCall.requestFlash(false) == expected, "\(label)")
            c.call.hangup()
            // Events reach the log in order: everything the requests raised is there by CallEnded.
            _ = try await log.wait(for: .CallEnded, rtcId)
            let requests = log.events(rtcId).filter { $0.type == .FlashRequested }
            #expect(requests.map { $0.data["torch"] } == ["on", "off"] && requests.allSatisfy { $0.data["requestedBy"] == "agent" }, "\(label)")
            let types = log.types(rtcId).filter { [.FlashRequested, .FlashOn, .FlashOff].contains($0) }
            if expected == .accepted {
                // Each state after its request (and before the agent heard ACCEPTED).
                #expect(types == [.FlashRequested, .FlashOn, .FlashRequested, .FlashOff], "\(label)")
                #expect(torch?.switched.value == [true, false])
                #expect(log.first(.FlashOn, rtcId)?.data["requestedBy"] == "agent")
            } else {
                #expect(types == [.FlashRequested, .FlashRequested], "\(label): the torch did not change")
                #expect(torch?.switched.value ?? [] == [])
            }
            try await eventually(.seconds(10), "agent free") { agent.calls.isEmpty }
        }
        await agent.logout()
        await backend.close()
    }

    /// A torch that only knows how to switch: it never implemented approval, so nobody asked the
    /// user and the agent is refused; the torch stays as it was.
    struct TorchWithoutApproval: FlashlightHandler {
        let switched = Locked<[Bool]>([])
        func setTorch(on: Bool) async -> Bool { switched.withLock { $0.append(on) }; return true }
    }

    @Test func aTorchWithoutApprovalRefusesTheAgent() async throws {
        let backend = try await Backend.start()
        // A bot's own timeout also answers REFUSED: pushed out of reach, so REFUSED is the caller's answer.
        let agent = try await backend.agent { $0.flashReplyTimeout = .seconds(600) }
        let sdk = try backend.sdk()
        let log = EventLog(sdk)
        let torch = TorchWithoutApproval()
        let c = try await connectedCall(sdk, log, agent: agent, torch: torch)
        #expect(try await c.agentCall.requestFlash(true) == .refused)
        #expect(try await c.agentCall.requestFlash(false) == .refused)
        #expect(try await log.wait(for: .FlashRequested, c.call.rtcId).data["requestedBy"] == "agent")
        #expect(torch.switched.value.isEmpty, "an agent never switched a torch nobody approved")
        #expect(log.count(.FlashOn, c.call.rtcId) == 0)
        // The app itself may still switch it (no approval: the app is the user).
        c.connection.setFlashlightEnabled(state: true)
        try await eventually(.seconds(5), "the app's own switch") { torch.switched.value == [true] }
        #expect(try await log.wait(for: .FlashOn, c.call.rtcId).data["requestedBy"] == nil)
        c.connection.setFlashlightEnabled(state: false)
        _ = try await log.wait(for: .FlashOff, c.call.rtcId)
        #expect(torch.switched.value == [true, false])
        c.call.hangup()
        _ = try await log.wait(for: .CallEnded, c.call.rtcId)
        await agent.logout()
        await backend.close()
    }

    @Test func takePhotoSwitchesToTheBackSourceAndBack() async throws {
        let backend = try await Backend.start()
        let agent = try await backend.agent()
        let sdk = try backend.sdk()
        let log = EventLog(sdk)
        let cameras = VideoInputs.cameras(front: .testPattern(pattern: "red"), back: .testPattern(pattern: "blue"))
        let c = try await connectedCall(sdk, log, agent: agent, video: cameras)
        @Sendable func dominant() -> String? {
            guard let color = c.view.color else { return nil }
            return color.red > 150 && color.blue < 100 ? "red" : color.blue > 150 && color.red < 100 ? "blue" : nil
        }
        try await eventually(.seconds(10), "front (red) at the agent") { dominant() == "red" }
        try c.agentCall.takePhoto(true)
        _ = try await log.wait(for: .TakePhotoOn, c.call.rtcId)
        try await eventually(.seconds(10), "back (blue) at the agent") { dominant() == "blue" }
        try c.agentCall.takePhoto(false)
        _ = try await log.wait(for: .TakePhotoOff, c.call.rtcId)
        try await eventually(.seconds(10), "front again") { dominant() == "red" }
        c.call.hangup()
        _ = try await log.wait(for: .CallEnded, c.call.rtcId)
        await agent.logout()
        await backend.close()
    }

    @Test func muteStatusTravelsBothWaysAndUnknownTextIsRaw() async throws {
        let backend = try await Backend.start()
        let agent = try await backend.agent()
        let sdk = try backend.sdk()
        let log = EventLog(sdk)
        let c = try await connectedCall(sdk, log, agent: agent)
        c.connection.setVideoEnabled(state: false)
        try await eventually(.seconds(5), "agent told the caller muted video") {
            c.agentCall.eventHistory.contains(.callerStatus(media: .video, muted: true))
        }
        try c.agentCall.sendStatus(media: .audio, muted: true)
        _ = try await log.wait(for: .RemoteAudioMuted, c.call.rtcId)
        try c.agentCall.send(.raw("OCR_RETRY"))
        let rtcId = c.call.rtcId
        @Sendable func texts() -> [String] { log.events(rtcId).filter { $0.type == .TextChannelMessage }.compactMap(\.detail) }
        try await eventually(.seconds(10), "the raw text arrived") { texts().contains("OCR_RETRY") }
        try c.agentCall.send(.hold(rtcId: "some-other-call"))
        // Its TextChannelMessage comes after the event it would have raised: none here.
        try await eventually(.seconds(10), "the other call's HOLD arrived") { texts().contains("HOLD|some-other-call") }
        #expect(log.count(.StartHold, c.call.rtcId) == 0, "a HOLD for another rtcId is not acted on")
        c.call.hangup()
        _ = try await log.wait(for: .CallEnded, c.call.rtcId)
        await agent.logout()
        await backend.close()
    }

    /// The seed's guide: every text received is a `TextChannelMessage` with the raw string. A
    /// command the call acts on raises its own event first and the `TextChannelMessage` right after.
    @Test func everyTextIsATextChannelMessageRightAfterItsOwnEvent() async throws {
        let backend = try await Backend.start()
        let agent = try await backend.agent()
        let sdk = try backend.sdk()
        let log = EventLog(sdk)
        let c = try await connectedCall(sdk, log, agent: agent)
        let rtcId = c.call.rtcId
        try c.agentCall.send(.hold(rtcId: rtcId))
        try c.agentCall.send(.pickup(rtcId: rtcId))
        try c.agentCall.sendStatus(media: .video, muted: true)
        #expect(try await c.agentCall.requestFlash(true) == .unavailable)
        try c.agentCall.send(.takePhotoOn)
        try c.agentCall.send(.hold(rtcId: "some-other-call"))
        try c.agentCall.send(.raw("OCR_RETRY"))
        let textEvents: Set<VideoCallEventType> = [.StartHold, .EndHold, .RemoteVideoMuted, .FlashRequested, .FlashOn, .TakePhotoOn,
                                                   .TextChannelMessage]
        @Sendable func seen() -> [String] {
            log.events(rtcId).filter { textEvents.contains($0.type) }.map { "\($0.type.rawValue) \($0.detail ?? "")" }
        }
        try await eventually(.seconds(10), "the last text arrived") { seen().last == "TextChannelMessage OCR_RETRY" }
        #expect(seen() == [
            "StartHold HOLD|\(rtcId)", "TextChannelMessage HOLD|\(rtcId)",
            "EndHold PICKUP|\(rtcId)", "TextChannelMessage PICKUP|\(rtcId)",
            "RemoteVideoMuted STATUS|VIDEO|MUTED|\(rtcId)", "TextChannelMessage STATUS|VIDEO|MUTED|\(rtcId)",
            "FlashRequested FLASH_ON", "TextChannelMessage FLASH_ON",
            "TakePhotoOn TAKE_PHOTO_ON", "TextChannelMessage TAKE_PHOTO_ON",
            "TextChannelMessage HOLD|some-other-call",
            "TextChannelMessage OCR_RETRY",
        ])
        c.call.hangup()
        _ = try await log.wait(for: .CallEnded, c.call.rtcId)
        await agent.logout()
        await backend.close()
    }
}
