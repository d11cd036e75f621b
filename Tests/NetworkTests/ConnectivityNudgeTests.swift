import Foundation
import NetworkTestSupport
import Testing

/// ICE held back for the first 5 s, then let through, with and without the nudges
/// (`ConnectivityNudge`), in two ways:
///
/// - *One end through, the other not*: the lab lets only its first answer to a connectivity check
///   out (`NetworkLab.setDropsCheckAnswersFromLab`), so the host's first check succeeds and its
///   nominating check goes unanswered, while the lab, nominated, is through. When the drop is
///   lifted, libnice alone sends that check again on its own schedule (0.5 s after the first try,
///   then 1, 2, 4 s apart: the tries at 3.5 s and 7.5 s bracket the lift, so the next comes
///   2.5–3 s after it); with the lab nudging through the selected pair the host checks again as
///   soon as the next nudge arrives.
/// - *Neither end through*: the lab lets only the host's first check in
///   (`NetworkLab.setDropsChecksIntoLab`), so both ends' ordinary checks succeed and the host's
///   nominating check never arrives. libnice alone resends it on the same schedule; with the lab
///   nudging through its candidate's socket before it is through, the host sends it again as
///   soon as the next nudge arrives.
@Suite(.serialized, .enabled(if: NetworkLab.isAvailable, "\(NetworkLab.unavailableReason ?? "")"))
struct ConnectivityNudgeTests {
    static let heldFor = 5.0

    enum Scenario: String {
        case labThrough = "one end through"
        case neitherThrough = "neither end through"
    }

    struct Outcome {
        /// From the lift to each end's ICE being through (negative: before the lift; lifting takes a few tens of ms, read after it).
        var hereAfterLift: Double
        var labAfterLift: Double
        var dropped: Int
    }

    static func call(_ scenario: Scenario, nudging: Bool) async throws -> Outcome {
        let lab = try NetworkLab()
        defer { lab.close() }
        func hold(_ on: Bool) throws {
            switch scenario {
            case .labThrough: try lab.setDropsCheckAnswersFromLab(on)
            case .neitherThrough: try lab.setDropsChecksIntoLab(on)
            }
        }
        try hold(true)
        let lift = Task { () throws -> (time: Double, dropped: Int) in
            try await Task.sleep(for: .seconds(heldFor))
            let dropped = try lab.droppedPackets()
            try hold(false)
            return (ProcessInfo.processInfo.systemUptime, dropped)
        }
        let call = try await LabCall.start(lab: lab, timeout: .seconds(heldFor + 10), nudgesConnectivityChecks: nudging)
        let lifted = try await lift.value
        await call.close()
        func through(_ side: String) -> Double? {
            call.milestones.value.first { $0.what == "\(side): ICE connected" || $0.what == "\(side): ICE completed" }
                .map { call.started + $0.time }
        }
        let here = try #require(through("here"), "\(call.milestoneSummary)")
        let atLab = try #require(through("lab"), "\(call.milestoneSummary)")
        let outcome = Outcome(hereAfterLift: here - lifted.time, labAfterLift: atLab - lifted.time, dropped: lifted.dropped)
        print("\(scenario.rawValue), nudging \(nudging): here through \(String(format: "%.2f", outcome.hereAfterLift)) s after the lift, "
              + "the lab \(String(format: "%.2f", outcome.labAfterLift)) s; \(lifted.dropped) packets dropped; \(call.milestoneSummary)")
        return outcome
    }

    @Test("the end that is through nudges the other: it is through within 0.6 s of its checks being answered again, where libnice's own schedule takes over 1.5 s")
    func throughSoonAfterAnswersReturn() async throws {
        let nudged = try await Self.call(.labThrough, nudging: true)
        #expect(nudged.dropped > 0 && nudged.labAfterLift < -0.5, "the scenario did not happen: one end through, the other's checks unanswered")
        #expect(nudged.hereAfterLift < 0.6)
        let alone = try await Self.call(.labThrough, nudging: false)
        #expect(alone.dropped > 0 && alone.labAfterLift < -0.5, "the scenario did not happen: one end through, the other's checks unanswered")
        #expect(alone.hereAfterLift > 1.5)
    }

    @Test("neither end through: the controlled end nudges through its candidate's socket, and both are through within 0.6 s of the nominating check getting in again, where libnice's own schedule takes over 1.5 s")
    func nominationSoonAfterChecksReturn() async throws {
        let nudged = try await Self.call(.neitherThrough, nudging: true)
        #expect(nudged.dropped > 0 && nudged.labAfterLift > -0.5, "the scenario did not happen: neither end through while the checks were dropped")
        #expect(nudged.hereAfterLift < 0.6 && nudged.labAfterLift < 0.6)
        let alone = try await Self.call(.neitherThrough, nudging: false)
        #expect(alone.dropped > 0 && alone.labAfterLift > -0.5, "the scenario did not happen: neither end through while the checks were dropped")
        #expect(alone.hereAfterLift > 1.5)
    }
}
