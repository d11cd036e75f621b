import ECV
import ECVAgent
import ECVProtocol
import ECVService
import ECVTestSupport
import GLibCore
import GStreamer
import Testing

@Suite(.serialized) struct CallFlowTests {
    /// v1.75: queue socket, a real call with media both ways, local hangup; the event sequence.
    @Test func successfulCallEventsInOrder() async throws {
        let backend = try await Backend.start()
        let agent = try await backend.agent()
        let sdk = try backend.sdk()
        let log = EventLog(sdk)
        let agentSees = CountingRendererBox()
        let renderer = CountingRenderer()
        let watcher = Task {
            for await case .callStarted(let call) in agent.events() { call.onCallerFrame { _ in agentSees.increment() } }
        }
        let call = try await placeCall(sdk, log: log, renderer: renderer)
        #expect(await call.agentConnected?.value == true)
        _ = try await log.wait(for: .WebRtcConnected, call.rtcId)
        try await eventually(.seconds(10), "frames both ways") { renderer.count > 20 && agentSees.count > 20 }
        #expect(renderer.size.map { $0 == (320, 240) } ?? false, "the agent sends 320x240")
        call.hangup()
        let ended = try await log.wait(for: .CallEnded, call.rtcId)
        #expect(ended.detail == "LOCAL_HANGUP")
        // The Hangup carried the caller token: the service accepted it. (The service logs it after
        // the ACD ended the call, and the queue socket's call_ended can reach the SDK first.)
        let rtcId = call.rtcId
        try await eventually(.seconds(5), "the service logged the accepted Hangup") {
            backend.service.log.entries(rtcId: rtcId).contains { $0.message.hasPrefix("Hangup \(rtcId) (LOCAL_HANGUP) → ended") }
        }
        let types = log.types(call.rtcId)
        // Init comes before the call has an rtcId, so it is only in the unfiltered log.
        #expect(isOrderedSubsequence([.Init, .GotRtcId], of: log.types()))
        #expect(isOrderedSubsequence([.GotRtcId, .DialSuccess, .OnQueue, .AgentConnected, .JoinedRoom, .SignalingConnected,
                                      .SignalingRegistered, .RtcPeerConnectionCreated, .GotLocalStream, .ConnectionTimeoutStart,
                                      .WebRtcConnected, .ConnectionTimeoutEnd, .Hangup, .CallEnded], of: types), "\(types)")
        #expect(types.contains(.GotRemoteStream) && types.contains(.TextChannelConnected))
        #expect(types.contains(.GotOffer) || types.contains(.SentOffer))
        #expect(types.last == .CallEnded && log.count(.CallEnded) == 1)
        #expect(log.count(.GotOffer, call.rtcId) + log.count(.SentOffer, call.rtcId) == 1, "one negotiation: \(types)")
        #expect(log.count(.TextChannelConnected, call.rtcId) == 1, "\(types)")
        #expect(log.count(.Error, call.rtcId) == 0, "errors: \(log.events(call.rtcId).filter { $0.type == .Error })")
        // lastEvent is the previous event of the same call.
        let pairs = log.pairs
        for index in 1..<pairs.count where pairs[index].0.type != .Init { #expect(pairs[index].1.createdAt <= pairs[index].0.createdAt) }
        #expect(log.first(.DialSuccess, call.rtcId)?.detail?.isEmpty == false)
        #expect(call.dialResponse?["interactionId"] as? String == log.first(.DialSuccess, call.rtcId)?.detail)
        #expect(sdk.getVideoCall(rtcId: call.rtcId) == nil, "the SDK forgets ended calls")
        // The browser link carries the caller token the page presents on its room requests.
        let token = try #require(call.callerToken)
        #expect(call.dialResponse?["callerToken"] as? String == token)
        #expect(call.getUrl() == backend.url + "/r/" + call.rtcId + "?token=" + token)
        watcher.cancel()
        await agent.logout()
        await backend.close()
    }

    /// A backend that issues no caller token (an older one, or the reference service switched
    /// open explicitly): the SDK sends none, and the call works as before, polling included.
    @Test func aBackendWithoutCallerTokensWorksUnchanged() async throws {
        let backend = try await Backend.start { $0.issuesCallerTokens = false }
        let agent = try await backend.agent()
        let sdk = try backend.sdk(useQueueSocket: false, useQueueInfo: true)
        let log = EventLog(sdk)
        let call = try await placeCall(sdk, log: log)
        _ = try await log.wait(for: .WebRtcConnected, call.rtcId)
        #expect(call.callerToken == nil && call.dialResponse?["callerToken"] == nil)
        #expect(call.getUrl() == backend.url + "/r/" + call.rtcId)
        call.hangup()
        #expect(try await log.wait(for: .CallEnded, call.rtcId).detail == "LOCAL_HANGUP")
        #expect(backend.service.log.entries(rtcId: call.rtcId).contains { $0.message.hasPrefix("Hangup \(call.rtcId) (LOCAL_HANGUP) → ended") })
        await agent.logout()
        await backend.close()
    }

    @Test func agentHangupEndsTheCallWithRemoteHangup() async throws {
        let backend = try await Backend.start()
        let agent = try await backend.agent()
        let sdk = try backend.sdk()
        let log = EventLog(sdk)
        let call = try await placeCall(sdk, log: log)
        _ = try await log.wait(for: .WebRtcConnected, call.rtcId)
        let agentCall = try #require(agent.call(rtcId: call.rtcId))
        await agentCall.hangup()
        let ended = try await log.wait(for: .CallEnded, call.rtcId)
        #expect(ended.detail == "REMOTE_HANGUP")
        #expect(log.count(.CallEnded, call.rtcId) == 1)
        await agent.logout()
        await backend.close()
    }

    @Test func agentWhoseMediaNeverComesEndsWithConnectionTimeout() async throws {
        let backend = try await Backend.start()
        let agent = try await backend.agent { $0.joinsRooms = false }
        let sdk = try backend.sdk()
        let log = EventLog(sdk)
        let call = try await placeCall(sdk, log: log, connect: ConnectParameters(connectionTimeout: 1500, videoWidth: 320, videoHeight: 240))
        let ended = try await log.wait(for: .CallEnded, call.rtcId)
        #expect(ended.detail == "CONNECTION_TIMEOUT")
        #expect(isOrderedSubsequence([.AgentConnected, .JoinedRoom, .ConnectionTimeoutStart, .CallEnded], of: log.types(call.rtcId)))
        #expect(!log.types(call.rtcId).contains(.WebRtcConnected))
        await agent.logout()
        await backend.close()
    }

    /// v1.5: no queue socket, legacy polling only.
    @Test func legacyPollingAgainstAv15Backend() async throws {
        let backend = try await Backend.start(version: .v1_5)
        let agent = try await backend.agent()
        let sdk = try backend.sdk(useQueueSocket: false)
        let log = EventLog(sdk)
        let call = try await placeCall(sdk, log: log)
        _ = try await log.wait(for: .WebRtcConnected, call.rtcId)
        #expect(log.count(.QueueInfoUpdated, call.rtcId) == 0, "legacy polling reports no queue figures")
        await agent.call(rtcId: call.rtcId)?.hangup()
        #expect(try await log.wait(for: .CallEnded, call.rtcId).detail == "REMOTE_HANGUP")
        await agent.logout()
        await backend.close()
    }

    /// Queue-info polling: real positions and wait times, then a -1 phase (ringing) that does not end the call.
    @Test func queueInfoPollingReportsPositionsAndSurvivesMinusOne() async throws {
        let backend = try await Backend.start { configuration in
            configuration.acd.assumedHandleTime = 120
            configuration.acd.queueEntryDelay = 0.3
        }
        let agent = try await backend.agent()
        let sdk = try backend.sdk(useQueueSocket: false, useQueueInfo: true)
        let log = EventLog(sdk)
        let first = try await placeCall(sdk, log: log) // keeps the only agent busy
        _ = try await log.wait(for: .WebRtcConnected, first.rtcId)
        let second = try #require(await sdk.createVideoCall())
        await second.start(dialCallParameters: DialCallParameters(callerName: "Second"))
        try await eventually(.seconds(10), "a real position and wait time") {
            log.events(second.rtcId).contains { event in
                guard let info = event.objData as? QueueInfo else { return false }
                return info.displayPosition == 1 && (info.ewtMinutes ?? 0) >= 1
            }
        }
        #expect(second.queueInfo?.displayPosition == 1)
        await agent.call(rtcId: first.rtcId)?.hangup() // the agent becomes free and rings for the second call
        _ = try await log.wait(for: .AgentConnected, second.rtcId)
        let infos = log.events(second.rtcId).compactMap { $0.objData as? QueueInfo }
        #expect(infos.contains { $0.position == -1 && $0.displayPosition == nil && $0.ewtMinutes == nil }, "a -1 phase was reported")
        #expect(!log.types(second.rtcId).contains(.CallEnded), "-1 never ends the call")
        second.hangup()
        _ = try await log.wait(for: .CallEnded, second.rtcId)
        await agent.logout()
        await backend.close()
    }
}

final class CountingRendererBox: Sendable {
    private let value = Locked(0)
    func increment() { value.withLock { $0 += 1 } }
    var count: Int { value.value }
}
