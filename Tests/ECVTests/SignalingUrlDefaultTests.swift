import ECV
import ECVAgent
import ECVTestSupport
import Testing

/// `signalingUrl`'s real default (README, Differences): not `serviceUrl`, as the guide's parameter
/// list says, but the join answer's `wss_url`; an explicit `signalingUrl` wins over it.
@Suite(.serialized) struct SignalingUrlDefaultTests {
    @Test func theJoinAnswersWssUrlUnlessSignalingUrlIsGiven() async throws {
        // The service advertises a base nothing listens on: its join answers name ws://127.0.0.1:1/ws.
        let backend = try await Backend.start { $0.advertisedBaseURL = "http://127.0.0.1:1" }
        let agent = try await backend.agent { $0.joinsRooms = false }
        let byDefault = try backend.sdk { $0.reconnectWindowMs = 0 }
        #expect(byDefault.config.signalingUrl == backend.url, "the property reads serviceUrl, as the guide's default")
        let log = EventLog(byDefault)
        let call = try #require(await byDefault.createVideoCall())
        await call.start(dialCallParameters: DialCallParameters(callerName: "Jane"))
        _ = try await log.wait(for: .AgentConnected, call.rtcId)
        await call.connect(parameters: ConnectParameters(videoWidth: 320, videoHeight: 240, noAudioProcessing: true))?.startRoom()
        let error = try await log.wait(for: .Error, call.rtcId)
        #expect(error.error?.name == .SIGNALING_FAILED && (error.detail ?? "").contains("127.0.0.1:1"), "the wss_url was used: \(error)")
        try await eventually(.seconds(10), "agent free again") { agent.calls.isEmpty }
        await agent.logout()

        // The agent bot reads the same default: it is given the service's own signaling too.
        let answering = try await backend.agent { $0.signalingUrl = backend.url }
        let explicit = try backend.sdk { config in
            config = ECVSdkConfiguration(name: "explicit", serviceUrl: backend.url, signalingUrl: backend.url.replacingOccurrences(of: "127.0.0.1", with: "localhost"))
        }
        let log2 = EventLog(explicit)
        let second = try await placeCall(explicit, log: log2)
        _ = try await log2.wait(for: .WebRtcConnected, second.rtcId)
        second.hangup()
        _ = try await log2.wait(for: .CallEnded, second.rtcId)
        await answering.logout()
        await backend.close()
    }
}
