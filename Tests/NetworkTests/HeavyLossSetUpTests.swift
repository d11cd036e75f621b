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
/// each side sends the other checks of its own every 150 ms until it hears the far end, which
/// libnice answers with a new check at once (`ConnectivityNudge`): over the selected pair once
/// through, and from the host candidates' own sockets before, so the controlling side's
/// nominating check goes again at once when it or its answer is lost. The loss drops TCP too, at
/// the lab's device (`NetworkLab`: a drop the sender never sees). Measured here, ten calls in a
/// row, 3 Dec 2026: with the nudges through the selected pair only, 110 of 110 connected in eleven
/// runs, the slowest in 2.0–3.5 s per run, but now and then 8–9.3 s (neither side through while
/// the nominating check missed four times on libnice's schedule, about one call in fifty); with
/// the nudges before ICE is through too, 90 of 90 in nine runs on 4–5 Dec, the slowest in 1.8–2.6 s
/// per run (the README's table). So the test asks for every one of
/// ten within the 10 s connection timeout, at a median of 15 fps or more each way, and prints what
/// it saw, with the milestones of any set-up over 3 s.
@Suite(.serialized, .enabled(if: NetworkLab.isAvailable, "\(NetworkLab.unavailableReason ?? "")"))
struct HeavyLossSetUpTests {
    private static var now: Double { ProcessInfo.processInfo.systemUptime }
    /// The SDK's default `connectionTimeout`.
    static let connectionTimeout = 10.0
    static let tries = 10

    @Test("at 20 % loss, each of ten calls in a row connects within the 10 s connection timeout, at a median of 15 fps or more both ways")
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
        #expect(setUps.count == Self.tries, "\(failures)")
        func median(_ values: [Double]) -> Double { values.isEmpty ? 0 : values.sorted()[values.count / 2] }
        #expect(median(rates.map(\.here)) >= 15 && median(rates.map(\.atLab)) >= 15, "\(rates)")
    }
}
