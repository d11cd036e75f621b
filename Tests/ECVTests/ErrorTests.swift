import ECV
import ECVAgent
import ECVProtocol
import ECVService
import ECVTestSupport
import Testing

/// Every ErrorName that can be provoked, provoked: each arrives as an `Error` event with
/// `lastError` set, and nothing hangs (every wait below is bounded).
@Suite(.serialized) struct ErrorTests {
    private func expectError(_ name: ErrorName, _ call: VideoCall, _ log: EventLog, ends: Bool,
                             sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let event = try await log.wait(for: .Error, call.rtcId.isEmpty ? nil : call.rtcId)
        #expect(event.data["name"] == name.rawValue, "got \(event)", sourceLocation: sourceLocation)
        #expect(call.lastError.name == name, sourceLocation: sourceLocation)
        #expect((event.objData as? ErrorObject)?.name == name, sourceLocation: sourceLocation)
        // The guide's events section: "event.error contains the ECVError … check error.error".
        #expect(event.error?.error.name == name && event.error?.error === event.objData as? ErrorObject, sourceLocation: sourceLocation)
        if ends {
            _ = try await log.wait(for: .CallEnded, call.rtcId.isEmpty ? nil : call.rtcId)
            #expect(call.isEnded, sourceLocation: sourceLocation)
        }
    }

    @Test func emptyServiceURL() async throws {
        _ = TestRuntime.ready
        let sdk = try ECVSdk(config: ECVSdkConfiguration(name: "empty", serviceUrl: ""))
        let log = EventLog(sdk)
        let call = try #require(await sdk.createVideoCall())
        try await expectError(.SERVICE_URL_REQUIRED, call, log, ends: true)
        #expect(log.first(.CallEnded)?.detail == "SERVICE_URL_REQUIRED")
    }

    @Test func unreachableServiceGivesNoRtcId() async throws {
        _ = TestRuntime.ready
        var configuration = ECVSdkConfiguration(name: "down", serviceUrl: "http://127.0.0.1:1", httpTimeoutMs: 1000)
        configuration.reconnectWindowMs = 300 // refused at once: retried briefly, then the error
        let sdk = try ECVSdk(config: configuration)
        let log = EventLog(sdk)
        let call = try #require(await sdk.createVideoCall())
        try await expectError(.GET_RTC_ID_FAILED, call, log, ends: true)
        await call.start()
        #expect(call.lastError.name == .CALL_ENDED)
    }

    @Test func callWithoutRtcIdCannotStart() async throws {
        let backend = try await Backend.start()
        let sdk = try backend.sdk()
        let log = EventLog(sdk)
        let call = try #require(await sdk.createVideoCall(rtcId: ""))
        await call.start()
        try await expectError(.CALL_NOT_INITIALIZED, call, log, ends: false)
        await backend.close()
    }

    @Test func startTwiceAndDialFailures() async throws {
        let backend = try await Backend.start()
        let sdk = try backend.sdk()
        let log = EventLog(sdk)
        let call = try #require(await sdk.createVideoCall())
        await call.start()
        await call.start()
        try await expectError(.CALL_ALREADY_DIALED, call, log, ends: false)
        #expect(backend.service.script.dialCount(rtcId: call.rtcId) == 1)
        call.hangup()
        _ = try await log.wait(for: .CallEnded, call.rtcId)

        backend.service.script.failNextDial(status: 500)
        let failing = try #require(await sdk.createVideoCall())
        await failing.start()
        try await expectError(.ERROR_DIALING, failing, log, ends: true)
        // The events section's name for the same failure.
        #expect(log.first(.Error, failing.rtcId)?.error?.error.name == .DIAL_FAILED)
        #expect(failing.lastError.message.contains("500"))
        await backend.close()
    }

    @Test func hangupBeforeDialAndHangupTheServiceRefuses() async throws {
        let backend = try await Backend.start()
        let sdk = try backend.sdk()
        let log = EventLog(sdk)
        let undialed = try #require(await sdk.createVideoCall())
        undialed.hangup()
        try await expectError(.CALL_NOT_DIALED, undialed, log, ends: true)
        #expect(log.first(.CallEnded, undialed.rtcId)?.detail == "LOCAL_HANGUP")

        let unknown = try #require(await sdk.createVideoCall(rtcId: "never-issued-by-the-service"))
        unknown.isDialed = true
        unknown.hangup()
        try await expectError(.HANGUP_FAILED, unknown, log, ends: true)
        #expect(log.first(.CallEnded, unknown.rtcId)?.detail == "LOCAL_HANGUP", "ended locally anyway")
        await backend.close()
    }

    @Test func queueSocketClosedByTheServer() async throws {
        let backend = try await Backend.start()
        // Without a reconnect window a dropped queue socket is final (ReconnectionTests: with one).
        let sdk = try backend.sdk { $0.reconnectWindowMs = 0 }
        let log = EventLog(sdk)
        let call = try #require(await sdk.createVideoCall())
        await call.start()
        // Attached (greeted), not just opened: only an attached socket can be dropped.
        try await eventually(.seconds(5), "queue socket attached") { backend.service.queueSocketRtcIds.contains(call.rtcId) }
        #expect(backend.service.script.dropQueueSocket(rtcId: call.rtcId))
        try await expectError(.QUEUE_SOCKET_CLOSED, call, log, ends: true)
        #expect(log.first(.Error, call.rtcId)?.error?.name == .QUEUE_SOCKET_ERROR)
        await backend.close()
    }

    @Test func pollingEndpointFailing() async throws {
        let backend = try await Backend.start()
        let sdk = try backend.sdk(useQueueSocket: false, delay: 50) { $0.waitForRoomIntervalEndpoint = "/api/NoSuchEndpoint?rtcId=" }
        let log = EventLog(sdk)
        let call = try #require(await sdk.createVideoCall())
        await call.start()
        try await expectError(.ERROR_WAITING_FOR_ROOM, call, log, ends: true)
        #expect(log.first(.Error, call.rtcId)?.error?.name == .WAIT_FOR_ROOM_FAILED)
        #expect(call.lastError.message.contains("404"))
        await backend.close()
    }

    @Test func failuresOnceTheAgentConnected() async throws {
        let backend = try await Backend.start()
        let agent = try await backend.agent()
        let sdk = try backend.sdk()
        let log = EventLog(sdk)

        // The join answer carries no ICE servers and the SDK has none.
        backend.service.script.omitICEServersInJoin(true)
        let noICE = try await placeCall(sdk, log: log)
        try await expectError(.NO_ICE_SERVERS_FOUND, noICE, log, ends: true)
        #expect(noICE.lastError.cause == .noICEServers, "\(noICE.lastError)")
        backend.service.script.omitICEServersInJoin(false)
        try await eventually(.seconds(10), "agent free again") { agent.calls.isEmpty }

        // AV1 cannot be sent with this GStreamer.
        let av1 = try await placeCall(sdk, log: log, connect: ConnectParameters(videoCodec: "AV1"))
        try await expectError(.INVALID_PARAMETERS, av1, log, ends: true)
        #expect(av1.lastError.message.contains("AV1"))
        if case .unsupportedMedia(let reason)? = av1.lastError.cause { #expect(reason.contains("AV1")) } else {
            Issue.record("the cause of an AV1 call's failure: \(String(describing: av1.lastError.cause))")
        }
        try await eventually(.seconds(10), "agent free again") { agent.calls.isEmpty }

        // A connected call: controls that cannot work report errors without ending the call.
        let call = try await placeCall(sdk, log: log)
        _ = try await log.wait(for: .WebRtcConnected, call.rtcId)
        let connection = try #require(call.webRtcConnection)
        connection.setFlashlightEnabled(state: true)
        try await expectError(.FLASHLIGHT_UNAVAILABLE, call, log, ends: false)
        #expect(!call.isEnded)
        call.hangup()
        _ = try await log.wait(for: .CallEnded, call.rtcId)
        #expect(call.connect() == nil)
        #expect(call.lastError.name == .CALL_ENDED)
        await agent.logout()
        await backend.close()
    }

    @Test func roomAndSignalingUnreachable() async throws {
        let backend = try await Backend.start()
        let agent = try await backend.agent { $0.joinsRooms = false }
        let joinDown = try backend.sdk { $0.webrtcUrl = "http://127.0.0.1:1"; $0.reconnectWindowMs = 300 }
        let log = EventLog(joinDown)
        let call = try await placeCall(joinDown, log: log, connect: ConnectParameters(joinHttpConnectTimeout: 500, joinHttpReadTimeout: 500))
        try await expectError(.JOIN_ROOM_FAILED, call, log, ends: true)
        try await eventually(.seconds(10), "agent free again") { agent.calls.isEmpty }

        let signalingDown = try backend.sdk { config in
            config = ECVSdkConfiguration(name: "sig", serviceUrl: backend.url, signalingUrl: "http://127.0.0.1:1")
        }
        let log2 = EventLog(signalingDown)
        let second = try await placeCall(signalingDown, log: log2)
        try await expectError(.SIGNALING_FAILED, second, log2, ends: true)
        await agent.logout()
        await backend.close()
    }

    @Test func cameraSwitchAndTextChannelMisuse() async throws {
        let backend = try await Backend.start()
        let agent = try await backend.agent()
        let sdk = try backend.sdk()
        let log = EventLog(sdk)
        let call = try #require(await sdk.createVideoCall())
        await call.start()
        _ = try await log.wait(for: .AgentConnected, call.rtcId)
        let connection = try #require(call.connect(parameters: ConnectParameters(videoWidth: 320, videoHeight: 240, textChannelConfig: nil)))
        connection.videoSource = .single(.testPattern())
        await connection.startRoom()
        _ = try await log.wait(for: .WebRtcConnected, call.rtcId)
        await #expect(throws: CallControlError.self) { try await connection.switchCamera() }
        #expect(call.lastError.name == .CAMERA_SWITCH_FAILED)
        connection.sendTextMessage("hello")
        #expect(call.lastError.name == .TEXT_CHANNEL_ERROR)
        #expect(!call.isEnded)
        call.hangup()
        _ = try await log.wait(for: .CallEnded, call.rtcId)
        await agent.logout()
        await backend.close()
    }
}
