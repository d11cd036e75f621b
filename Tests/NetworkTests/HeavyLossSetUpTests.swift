import Foundation
import NetworkTestSupport
import Testing
import WebRTC

/// Calls set up across a path that already loses 20 % of its packets both ways (see `NetworkLab`).
///
/// GStreamer 1.22's DTLS resends a lost handshake flight after 1 s, doubling each time; the
/// handshake replay (`HandshakeReplay`) sends it again every 150 ms while the far end answers
/// nothing new (until the far end's media shows its DTLS is done), with each change cipher spec
/// renumbered (OpenSSL drops one that arrives before the messages ahead of it, and every
/// byte-for-byte copy after it). libnice resends a connectivity check after 0.5 s, then 1, 2, 4 s;
/// the side that is through sends the other checks of its own every 150 ms, which libnice answers
/// with a new check at once (`ConnectivityNudge`). The loss drops TCP too, at the lab's device
/// (`NetworkLab`: a drop the sender never sees). Measured here, ten calls in a row, 3 Dec 2026:
/// with all of that 110 of 110 connected in eleven runs, the slowest in 2.0–3.5 s per run but once
/// 9.3 s; without the nudges 200 of 200 in twenty runs, but set-ups of up to 9.7 s (of the last 80:
/// 4.1, 4.2, 5.4 and 9.7 s, one side waiting out libnice's schedule); before the renumbering 136 of
/// 140. The 9.3 s call is what remains: webrtcbin's libnice nominates regularly, so neither side is
/// through until the controlling side's nominating check and its answer both get through, and that
/// check is resent on libnice's 0.5, 1, 2, 4 s schedule with nothing through to nudge it (four
/// misses in a row, 0.36⁴ ≈ 1.7 %, mean ICE at ~8.2 s; five, ≈ 0.6 %, past the timeout). So the test
/// holds to nine of ten within the 10 s connection timeout and a median of 15 fps or more each way,
/// and prints what it saw, with the milestones of any set-up over 3 s.
@Suite(.serialized, .enabled(if: NetworkLab.isAvailable, "\(NetworkLab.unavailableReason ?? "")"))
struct HeavyLossSetUpTests {
    private static var now: Double { ProcessInfo.processInfo.systemUptime }
    /// The SDK's default `connectionTimeout`.
    static let connectionTimeout = 10.0
    static let tries = 10

    @Test("at 20 % loss, of ten calls in a row at least nine connect within the 10 s connection timeout, at a median of 15 fps or more both ways")
    func tenCallsAtTwentyPercentLoss() async throws {
        let lab = try NetworkLab()
        defer { lab.close() }
        try lab.setLoss(percent: 20)
        var setUps: [Double] = [], rates: [(here: Double, atLab: Double)] = [], failures: [String] = [], slow: [String] = []
        for _ in 0..<Self.tries {
            let started = Self.now
            let call: LabCall
            do { call = try await LabCall.start(lab: lab, timeout: .seconds(Self.connectionTimeout)) } catch {
                failures.append("\(error)")
                continue
            }
            setUps.append(Self.now - started)
            if setUps.last! > 3 { slow.append(String(format: "%.1f s: ", setUps.last!) + call.milestoneSummary) }
            // A second to settle (the first key frames cross the lossy path), then three measured:
            // these stretches are the clock's, frames are counted over them.
            let from = Self.now + 1
            try await Task.sleep(for: .seconds(4))
            rates.append((Double(call.framesHere.count(from: from, to: from + 3)) / 3, Double(call.framesAtLab.count(from: from, to: from + 3)) / 3))
            await call.close()
        }
        print("20 % loss: \(setUps.count) of \(Self.tries) connected, set-up \(setUps.sorted().map { String(format: "%.1f", $0) }) s; "
              + "fps here/at the lab \(rates.map { "\(Int($0.here))/\(Int($0.atLab))" }); failures \(failures)")
        for line in slow { print("20 % loss, a slow set-up: \(line)") }
        #expect(setUps.count >= Self.tries - 1, "\(failures)")
        func median(_ values: [Double]) -> Double { values.isEmpty ? 0 : values.sorted()[values.count / 2] }
        #expect(median(rates.map(\.here)) >= 15 && median(rates.map(\.atLab)) >= 15, "\(rates)")
    }
}
