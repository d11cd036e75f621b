import ECV
import ECVService
import ECVTestSupport
import Testing

/// The per-call override precedence of the queue-info guide, row by row: socket > queue info > legacy;
/// a nil override falls back to the configuration; overriding only queue info while the socket is on
/// changes nothing.
@Suite(.serialized) struct QueueModeTests {
    struct Row: Sendable, CustomStringConvertible {
        let configSocket: Bool, configInfo: Bool
        let overrideSocket: Bool?, overrideInfo: Bool?
        let expected: QueueWaitMode
        var description: String {
            "config(socket: \(configSocket), info: \(configInfo)) override(socket: \(overrideSocket.map(String.init) ?? "nil"), info: \(overrideInfo.map(String.init) ?? "nil")) → \(expected)"
        }
    }

    static let rows: [Row] = [
        Row(configSocket: true, configInfo: false, overrideSocket: nil, overrideInfo: nil, expected: .queueSocket),
        Row(configSocket: true, configInfo: true, overrideSocket: nil, overrideInfo: nil, expected: .queueSocket),
        Row(configSocket: true, configInfo: false, overrideSocket: nil, overrideInfo: true, expected: .queueSocket),
        Row(configSocket: true, configInfo: false, overrideSocket: false, overrideInfo: true, expected: .queueInfoPolling),
        Row(configSocket: true, configInfo: false, overrideSocket: false, overrideInfo: nil, expected: .legacyPolling),
        Row(configSocket: false, configInfo: true, overrideSocket: nil, overrideInfo: nil, expected: .queueInfoPolling),
        Row(configSocket: false, configInfo: true, overrideSocket: nil, overrideInfo: false, expected: .legacyPolling),
        Row(configSocket: false, configInfo: false, overrideSocket: nil, overrideInfo: nil, expected: .legacyPolling),
        Row(configSocket: false, configInfo: false, overrideSocket: nil, overrideInfo: true, expected: .queueInfoPolling),
        Row(configSocket: false, configInfo: false, overrideSocket: true, overrideInfo: nil, expected: .queueSocket),
    ]

    @Test(arguments: rows)
    func overridePrecedence(row: Row) async throws {
        let backend = try await Backend.start() // no agent: the call stays queued
        // A zero delay logs every legacy poll the service answers, so legacy polls can be counted.
        backend.service.script.delay(.waitForRoomInterval, by: .zero)
        let sdk = try backend.sdk(useQueueSocket: row.configSocket, useQueueInfo: row.configInfo, delay: 100)
        let log = EventLog(sdk)
        let call = try #require(await sdk.createVideoCall())
        call.useQueueSocketOverride = row.overrideSocket
        call.useQueueInfoOverride = row.overrideInfo
        await call.start(dialCallParameters: DialCallParameters(callerName: "Row"))
        #expect(call.queueWaitMode == row.expected, "\(row)")
        let rtcId = call.rtcId
        @Sendable func socketOpened() -> Bool { backend.service.log.entries(rtcId: rtcId).contains { $0.category == .queueSocket } }
        @Sendable func queueInfoEvents() -> Int { log.count(.QueueInfoUpdated, rtcId) }
        @Sendable func legacyPolls() -> Int {
            backend.service.log.entries.filter { $0.category == .script && $0.message.hasPrefix("answer of waitForRoomInterval held") }.count
        }
        switch row.expected {
        case .queueSocket: try await eventually(.seconds(10), "the queue socket opened: \(row)") { socketOpened() }
        case .queueInfoPolling: try await eventually(.seconds(10), "two queue-info polls: \(row)") { queueInfoEvents() >= 2 }
        case .legacyPolling: try await eventually(.seconds(10), "two legacy polls: \(row)") { legacyPolls() >= 2 }
        }
        // A clock for the absences: a queue-info caller on the same interval, started after the
        // row's call, polls four times; a wrongly started waiter of the row's call had as long.
        let witnessSdk = try backend.sdk(useQueueSocket: false, useQueueInfo: true, delay: 100)
        let witnessLog = EventLog(witnessSdk)
        let witness = try #require(await witnessSdk.createVideoCall())
        await witness.start(dialCallParameters: DialCallParameters(callerName: "Witness"))
        try await eventually(.seconds(10), "four polls of the witness") { witnessLog.count(.QueueInfoUpdated, witness.rtcId) >= 4 }
        switch row.expected {
        case .queueSocket: #expect(queueInfoEvents() == 0 && legacyPolls() == 0, "\(row)")
        case .queueInfoPolling: #expect(!socketOpened() && legacyPolls() == 0, "\(row)")
        case .legacyPolling: #expect(!socketOpened() && queueInfoEvents() == 0, "\(row)")
        }
        #expect(!log.types(rtcId).contains(.CallEnded))
        call.hangup()
        witness.hangup()
        #expect(try await log.wait(for: .CallEnded, rtcId).detail == "LOCAL_HANGUP")
        _ = try await witnessLog.wait(for: .CallEnded, witness.rtcId)
        await backend.close()
    }

    /// The queue-info guide: `QueueInfoUpdated` on every poll, with the raw state (detail, data and
    /// `QueueInfo.state`), also once an agent answered; the state's own event comes right after it.
    @Test func queueInfoUpdatedOnEveryPollWithTheRawState() async throws {
        let backend = try await Backend.start()
        let agent = try await backend.agent()
        let sdk = try backend.sdk(useQueueSocket: false, useQueueInfo: true, delay: 100)
        let log = EventLog(sdk)
        let call = try #require(await sdk.createVideoCall())
        await call.start(dialCallParameters: DialCallParameters(callerName: "Raw"))
        _ = try await log.wait(for: .AgentConnected, call.rtcId)
        @Sendable func connectedPolls() -> [VideoCallEvent] {
            log.events(call.rtcId).filter { $0.type == .QueueInfoUpdated && $0.detail == "agent_connected" }
        }
        try await eventually(.seconds(10), "polls after the agent answered raise QueueInfoUpdated") { connectedPolls().count >= 2 }
        let events = log.events(call.rtcId)
        let firstConnected = try #require(events.firstIndex { $0.type == .QueueInfoUpdated && $0.detail == "agent_connected" })
        #expect(events[firstConnected + 1].type == .AgentConnected, "the raw state first, then its own event")
        #expect(log.count(.AgentConnected, call.rtcId) == 1)
        for event in connectedPolls() {
            let info = try #require(event.objData as? QueueInfo)
            #expect(info.state == "agent_connected" && event.data["state"] == "agent_connected" && info.displayPosition == nil)
        }
        #expect(call.queueInfo?.state == "agent_connected")
        call.hangup()
        #expect(try await log.wait(for: .CallEnded, call.rtcId).detail == "LOCAL_HANGUP")
        await agent.logout()
        await backend.close()
    }

    /// The seed's troubleshooting table: `not found` is a backend that has not caught up yet. A few in
    /// a row are reported and the call keeps waiting; `notFoundPollLimit` (3) of them in a row end it
    /// with `ERROR_WAITING_FOR_ROOM`, in queue-info and legacy polling alike.
    @Test func notFoundEndsTheCallOnlyAfterABoundedNumberOfPolls() async throws {
        let backend = try await Backend.start() // no agent: calls stay queued
        let sdk = try backend.sdk(useQueueSocket: false, useQueueInfo: true, delay: 50)
        let log = EventLog(sdk)
        @Sendable func states(_ call: VideoCall) -> [String] {
            log.events(call.rtcId).filter { $0.type == .QueueInfoUpdated }.compactMap(\.detail)
        }

        let transient = try #require(await sdk.createVideoCall())
        backend.service.script.answerNotFound(rtcId: transient.rtcId, polls: 2)
        await transient.start(dialCallParameters: DialCallParameters(callerName: "Transient"))
        try await eventually(.seconds(10), "the call waits on after two not-found answers") { states(transient).count >= 4 }
        #expect(Array(states(transient).prefix(4)) == ["not found", "not found", "wait", "wait"])
        #expect(!log.types(transient.rtcId).contains(.Error) && !transient.isEnded)
        transient.hangup()
        #expect(try await log.wait(for: .CallEnded, transient.rtcId).detail == "LOCAL_HANGUP")

        let lost = try #require(await sdk.createVideoCall())
        backend.service.script.answerNotFound(rtcId: lost.rtcId, polls: 1000)
        await lost.start(dialCallParameters: DialCallParameters(callerName: "Lost"))
        let error = try await log.wait(for: .Error, lost.rtcId)
        #expect(error.data["name"] == ErrorName.ERROR_WAITING_FOR_ROOM.rawValue)
        #expect(try await log.wait(for: .CallEnded, lost.rtcId).detail == ErrorName.ERROR_WAITING_FOR_ROOM.rawValue)
        #expect(states(lost) == ["not found", "not found", "not found"], "exactly notFoundPollLimit polls")
        let types = log.types(lost.rtcId)
        #expect(isOrderedSubsequence([.QueueInfoUpdated, .QueueInfoUpdated, .QueueInfoUpdated, .Error, .CallEnded], of: types))

        let legacySdk = try backend.sdk(useQueueSocket: false, useQueueInfo: false, delay: 50)
        let legacyLog = EventLog(legacySdk)
        let legacy = try #require(await legacySdk.createVideoCall())
        backend.service.script.answerNotFound(rtcId: legacy.rtcId, polls: 1000)
        await legacy.start(dialCallParameters: DialCallParameters(callerName: "Legacy"))
        #expect(try await legacyLog.wait(for: .CallEnded, legacy.rtcId).detail == ErrorName.ERROR_WAITING_FOR_ROOM.rawValue)
        #expect(legacyLog.count(.QueueInfoUpdated, legacy.rtcId) == 0)
        #expect(legacy.lastError.message.contains("3 polls in a row"))
        await backend.close()
    }
}
