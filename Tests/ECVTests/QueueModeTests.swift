import ECVTestSupport
import ECV
import ECVService
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
        let sdk = try backend.sdk(useQueueSocket: row.configSocket, useQueueInfo: row.configInfo, delay: 100)
        let log = EventLog(sdk)
        let call = try #require(await sdk.createVideoCall())
        call.useQueueSocketOverride = row.overrideSocket
        call.useQueueInfoOverride = row.overrideInfo
        await call.start(dialCallParameters: DialCallParameters(callerName: "Row"))
        #expect(call.queueWaitMode == row.expected, "\(row)")
        try await Task.sleep(for: .milliseconds(400)) // several polling intervals
        let socketOpened = backend.service.log.entries(rtcId: call.rtcId).contains { $0.category == .queueSocket }
        let queueInfoEvents = log.count(.QueueInfoUpdated, call.rtcId)
        switch row.expected {
        case .queueSocket: #expect(socketOpened && queueInfoEvents == 0, "\(row)")
        case .queueInfoPolling: #expect(!socketOpened && queueInfoEvents >= 2, "\(row)")
        case .legacyPolling: #expect(!socketOpened && queueInfoEvents == 0, "\(row)")
        }
        #expect(!log.types(call.rtcId).contains(.CallEnded))
        call.hangup()
        #expect(try await log.wait(for: .CallEnded, call.rtcId).detail == "LOCAL_HANGUP")
        await backend.close()
    }
}
