import ECV
import ECVAgent
import ECVProtocol
import ECVTestSupport
import GLibCore
import NetworkTestSupport
import Testing

/// Relay-only calls (the customization guide's "ICE filtering modes") through a real TURN server:
/// Debian's coturn in a network namespace the test makes, with credentials given in each side's
/// `ConnectParameters`.
@Suite(.serialized) struct RelayOnlyTests {
    /// Both ends relay-only: the call connects with media both ways and each side's selected
    /// candidate pair is a relayed one, on coturn's address; coturn allocated for both.
    @Test(.enabled(if: TurnServer.unavailableReason == nil, "\(TurnServer.unavailableReason ?? "")"))
    func aCallThroughTURNWithRelayOnlyOnBothEnds() async throws {
        let lab = try NetworkLab()
        defer { lab.close() }
        let turn = try await TurnServer(in: lab)
        defer { turn.close() }
        let backend = try await Backend.start()
        var relayOnly = ConnectParameters(videoWidth: 320, videoHeight: 240, noAudioProcessing: true)
        relayOnly.iceTransportPolicy = .relay
        relayOnly.iceServers = [ICEServer(urls: [turn.url], username: turn.username, credential: turn.credential)]
        let agent = try await backend.agent { $0.parameters = relayOnly }
        let sdk = try backend.sdk()
        let log = EventLog(sdk)
        let c = try await connectedCall(sdk, log, agent: agent, parameters: relayOnly)
        let pictures = CountingRenderer()
        c.connection.remoteVideoRenderer = pictures
        try await eventually(.seconds(10), "the agent's picture at the caller") { pictures.count > 3 }
        let callerPair = try #require(await c.connection.stats()?.candidatePair)
        let agentPair = try #require(await c.agentCall.stats()?.candidatePair)
        #expect(callerPair.localType == "relay" && callerPair.remoteType == "relay", "caller: \(callerPair)")
        #expect(agentPair.localType == "relay" && agentPair.remoteType == "relay", "agent: \(agentPair)")
        #expect(callerPair.localAddress == turn.address && agentPair.localAddress == turn.address, "coturn's relay address")
        #expect(turn.log.components(separatedBy: "ALLOCATE processed, success").count - 1 >= 2, "coturn allocated for both: \(turn.log.suffix(1500))")
        c.call.hangup()
        _ = try await log.wait(for: .CallEnded, c.call.rtcId)
        await agent.logout()
        await backend.close()
    }

    /// Relay-only with no TURN server anywhere cannot connect: the call fails at once with
    /// `INVALID_PARAMETERS` instead of waiting out ICE.
    @Test func relayOnlyWithoutATURNServerFailsAtOnce() async throws {
        let backend = try await Backend.start()
        let agent = try await backend.agent()
        let sdk = try backend.sdk { $0.iceTransportPolicy = .relay }
        let log = EventLog(sdk)
        let call = try #require(await sdk.createVideoCall())
        await call.start(dialCallParameters: DialCallParameters(callerName: "Jane"))
        _ = try await log.wait(for: .AgentConnected, call.rtcId)
        let connection = try #require(call.connect(parameters: ConnectParameters(videoWidth: 320, videoHeight: 240, noAudioProcessing: true)))
        await connection.startRoom()
        let error = try await log.wait(for: .Error, call.rtcId)
        #expect(error.error?.name == .INVALID_PARAMETERS && (error.detail ?? "").contains("TURN"), "\(error)")
        #expect(error.error?.cause == .relayWithoutTURN)
        _ = try await log.wait(for: .CallEnded, call.rtcId)
        #expect(!log.types(call.rtcId).contains(.RtcPeerConnectionCreated), "no peer was built")
        await agent.logout()
        await backend.close()
    }
}
