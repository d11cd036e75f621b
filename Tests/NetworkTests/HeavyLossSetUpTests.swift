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
/// byte-for-byte copy after it), and connectivity checks are resent from 100 ms instead of 200.
/// The loss drops TCP too, at the lab's device (`NetworkLab`: a drop the sender never sees).
/// Measured here, ten calls in a row, 2–3 Dec 2026: 120 of 120 connected in twelve runs with all
/// of that (slowest 2.3–8.7 s per run); before the renumbering 136 of 140 (set-ups of 5–9 s one in
/// ten); with the lab's old `output`-hook loss (EPERM to the sender, which fails libnice's
/// check and its pair for good) 9 of 10 per run. The test holds to 9 of 10 (a tail of OpenSSL's
/// own timers remains: a lost epoch 1 Finished can only be resent by it) and a median of 15 fps
/// or more each way over the calls that connected, and prints what it saw.
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
        var setUps: [Double] = [], rates: [(here: Double, atLab: Double)] = [], failures: [String] = []
        for _ in 0..<Self.tries {
            let started = Self.now
            let call: LabCall
            do { call = try await LabCall.start(lab: lab, timeout: .seconds(Self.connectionTimeout)) } catch {
                failures.append("\(error)")
                continue
            }
            setUps.append(Self.now - started)
            // A second to settle (the first key frames cross the lossy path), then three measured:
            // these stretches are the clock's, frames are counted over them.
            let from = Self.now + 1
            try await Task.sleep(for: .seconds(4))
            rates.append((Double(call.framesHere.count(from: from, to: from + 3)) / 3, Double(call.framesAtLab.count(from: from, to: from + 3)) / 3))
            await call.close()
        }
        print("20 % loss: \(setUps.count) of \(Self.tries) connected, set-up \(setUps.sorted().map { String(format: "%.1f", $0) }) s; "
              + "fps here/at the lab \(rates.map { "\(Int($0.here))/\(Int($0.atLab))" }); failures \(failures)")
        #expect(setUps.count >= 9, "\(failures)")
        func median(_ values: [Double]) -> Double { values.isEmpty ? 0 : values.sorted()[values.count / 2] }
        #expect(median(rates.map(\.here)) >= 15 && median(rates.map(\.atLab)) >= 15, "\(rates)")
    }
}
