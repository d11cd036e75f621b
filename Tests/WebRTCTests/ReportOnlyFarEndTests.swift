import Testing
@testable import WebRTC

/// A far end that sends no media and reports as seldom as RFC 3550 lets it (GStreamer's default
/// `rtcp-min-interval`, 5 s, randomised ×0.5–1.5: a bare webrtcbin that only receives) is alive:
/// it stays connected, and when it vanishes it is still noticed.
@Suite(.serialized) struct ReportOnlyFarEndTests {
    /// The far end's regular report interval: RFC 3550's minimum and GStreamer's default.
    static let farEndReportInterval: Duration = .seconds(5)

    /// An ECVKit sender and a receive-only ECVKit far end that reports every 2.5–7.5 s; the
    /// sender keeps the default silence bounds (3 s, 10 s).
    private static func pairWithSeldomReportingListener() -> PeerPair {
        var listener = testMedia()
        listener.sendsMedia = false
        return PeerPair(offerer: testMedia(), answerer: listener) { configuration in
            if !configuration.media.sendsMedia { configuration.rtcpMinInterval = farEndReportInterval }
        }
    }

    /// Before the silence bound followed the far end's cadence, the sender reported such a far
    /// end disconnected within seconds (a gap over 3 s between its reports) and failed when two
    /// reports were late; a call engine rebuilt the call.
    @Test func farEndReportingAtRFC3550IntervalStaysConnected() async throws {
        let pair = Self.pairWithSeldomReportingListener()
        let states = pair.offerer.events()
        try await pair.start()
        try await waitFor(.connected, on: pair.offerer)
        let lost = Task { () -> PeerState? in
            for await case .stateChanged(let state) in states where state == .disconnected || state == .failed { return state }
            return nil
        }
        // Holding the call is the test: 24 s is several of the far end's report intervals.
        try await Task.sleep(for: .seconds(24))
        let interval = await pair.answerer.session?.rtcpMinInterval
        await pair.close()
        #expect(interval == Self.farEndReportInterval, "the far end reported at RFC 3550's interval")
        #expect(await lost.value == nil, "the sender stayed connected for 24 s of a far end reporting every 2.5–7.5 s")
    }

    /// The same far end vanishing without a word (no bye, no close on the wire that reaches us)
    /// is still reported disconnected, then failed.
    @Test func vanishedReportOnlyFarEndIsNoticed() async throws {
        let pair = Self.pairWithSeldomReportingListener()
        try await pair.start()
        try await waitFor(.connected, on: pair.offerer)
        pair.signaling.setFilter { _, _ in false }
        await pair.answerer.close()
        try await waitFor(.disconnected, on: pair.offerer, timeout: .seconds(30))
        try await waitFor(.failed, on: pair.offerer, timeout: .seconds(30))
        await pair.offerer.close()
        pair.signaling.close()
    }
}
