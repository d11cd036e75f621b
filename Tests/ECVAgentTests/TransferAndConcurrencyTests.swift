import ECV
import ECVAgent
import ECVProtocol
import ECVService
import ECVTestSupport
import GLibCore
import GStreamer
import Testing

@Suite(.serialized) struct TransferAndConcurrencyTests {
    /// Agent A transfers to Billing; the caller re-queues with the new rtcId without a DialEx and
    /// agent B takes the call with media.
    @Test func transferToAQueueEndToEnd() async throws {
        let backend = try await Backend.start()
        let alice = try await backend.agent(name: "Alice", queues: ["default"])
        let bob = try await backend.agent(name: "Bob", queues: ["Billing"])
        let sdk = try backend.sdk()
        let log = EventLog(sdk)
        let c = try await connectedCall(sdk, log, agent: alice)
        let dialsBefore = backend.service.script.dialCount(rtcId: c.call.rtcId)
        try await c.agentCall.transfer(to: .queue("Billing"))
        _ = try await log.wait(for: .TransferPending, c.call.rtcId)
        let completed = try await log.wait(for: .TransferCompleted, c.call.rtcId)
        let newRtcId = try #require(completed.data["rtcId"])
        #expect(newRtcId != c.call.rtcId)
        // The old leg's last event is TransferCompleted (Turkish guide §7.1): torn down, no CallEnded.
        try await eventually(.seconds(10), "the old leg is torn down") { c.call.isEnded && sdk.getVideoCall(rtcId: c.call.rtcId) == nil }
        #expect(log.types(c.call.rtcId).last == .TransferCompleted && log.count(.CallEnded, c.call.rtcId) == 0)

        let leg = try #require(await sdk.createVideoCall(rtcId: newRtcId))
        leg.isDialed = true
        #expect(await leg.createQueueSocket())
        _ = try await log.wait(for: .AgentConnected, newRtcId)
        #expect(log.first(.AgentConnected, newRtcId)?.data["agentName"] == "Bob")
        let connection = try #require(leg.connect(parameters: ConnectParameters(videoWidth: 320, videoHeight: 240, noAudioProcessing: true)))
        let renderer = CountingRenderer()
        connection.remoteVideoRenderer = renderer
        await connection.startRoom()
        try await eventually(.seconds(10), "Bob's picture at the caller") { renderer.count > 5 }
        #expect(backend.service.script.dialCount(rtcId: newRtcId) == 0, "the transferred leg is never dialed")
        #expect(backend.service.script.dialCount(rtcId: c.call.rtcId) == dialsBefore)
        #expect(!log.types(newRtcId).contains(.DialSuccess))
        leg.hangup()
        _ = try await log.wait(for: .CallEnded, newRtcId)
        await alice.logout()
        await bob.logout()
        await backend.close()
    }

    /// Five callers dial at once; two bots take them all (a bot serves one call at a time), with media.
    @Test func twoBotsTakeFiveConcurrentCalls() async throws {
        let backend = try await Backend.start()
        let bots = [try await backend.agent(name: "B1"), try await backend.agent(name: "B2")]
        let served = Locked<[String: Int]>([:])
        // Rooms whose caller has seen the agent's video: the bot hangs up only then, so a slow
        // set-up on a busy machine cannot end a call before its media was checked.
        let watched = Locked<Set<String>>([])
        let watchers = bots.map { bot in
            Task {
                for await case .callStarted(let call) in bot.events() {
                    served.withLock { $0[bot.configuration.name, default: 0] += 1 }
                    Task {
                        // Hung up either way: a caller that never sees media fails its own check.
                        try? await eventually(.seconds(20), "the caller of \(call.rtcId) saw media") { watched.value.contains(call.rtcId) }
                        await call.hangup()
                    }
                }
            }
        }
        let sdk = try backend.sdk()
        let log = EventLog(sdk)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<5 {
                group.addTask {
                    let renderer = CountingRenderer()
                    let call = try await placeCall(sdk, log: log, parameters: DialCallParameters(callerName: "Caller \(index)"),
                                                   renderer: renderer)
                    try await eventually(.seconds(20), "agent media for caller \(index)") { renderer.count > 3 || call.isEnded }
                    watched.withLock { _ = $0.insert(call.rtcId) }
                    #expect(try await log.wait(for: .CallEnded, call.rtcId, timeout: .seconds(60)).detail == "REMOTE_HANGUP")
                    #expect(renderer.count > 3)
                }
            }
            try await group.waitForAll()
        }
        #expect(served.value.values.reduce(0, +) == 5)
        #expect(served.value.count == 2, "both bots served calls: \(served.value)")
        watchers.forEach { $0.cancel() }
        for bot in bots { await bot.logout() }
        await backend.close()
    }
}
