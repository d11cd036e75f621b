import Foundation
import NetworkTestSupport
import Testing

/// One end through ICE, the other not: for the first 5 s the lab lets only its first answer to a
/// connectivity check out (`NetworkLab.setDropsCheckAnswersFromLab`), so the host's first check
/// succeeds and its nominating check goes unanswered, while the lab, nominated, is through. When
/// the drop is lifted, libnice alone sends that check again on its own schedule (0.5 s after the
/// first try, then 1, 2, 4 s apart: the tries at 3.5 s and 7.5 s bracket the lift, so the next
/// comes 2.5–3 s after it); with the lab nudging (`ConnectivityNudge`) the host checks again as
/// soon as the next nudge arrives.
@Suite(.serialized, .enabled(if: NetworkLab.isAvailable, "\(NetworkLab.unavailableReason ?? "")"))
struct ConnectivityNudgeTests {
    static let answersDroppedFor = 5.0

    struct Outcome {
        /// From the drop's end to the host's ICE being through, and the lab's before that end.
        var hereAfterLift: Double
        var labBeforeLift: Double
        var dropped: Int
    }

    static func call(nudging: Bool) async throws -> Outcome {
        let lab = try NetworkLab()
        defer { lab.close() }
        try lab.setDropsCheckAnswersFromLab(true)
        let lift = Task { () throws -> (time: Double, dropped: Int) in
            try await Task.sleep(for: .seconds(answersDroppedFor))
            let dropped = try lab.droppedPackets()
            try lab.setDropsCheckAnswersFromLab(false)
            return (ProcessInfo.processInfo.systemUptime, dropped)
        }
        let call = try await LabCall.start(lab: lab, timeout: .seconds(answersDroppedFor + 10), nudgesConnectivityChecks: nudging)
        let lifted = try await lift.value
        await call.close()
        func through(_ side: String) -> Double? {
            call.milestones.value.first { $0.what == "\(side): ICE connected" || $0.what == "\(side): ICE completed" }
                .map { call.started + $0.time }
        }
        let here = try #require(through("here"), "\(call.milestoneSummary)")
        let atLab = try #require(through("lab"), "\(call.milestoneSummary)")
        print("nudging \(nudging): lab through \(String(format: "%.2f", lifted.time - atLab)) s before the lift, here "
              + "\(String(format: "%.2f", here - lifted.time)) s after; \(lifted.dropped) answers dropped; \(call.milestoneSummary)")
        return Outcome(hereAfterLift: here - lifted.time, labBeforeLift: lifted.time - atLab, dropped: lifted.dropped)
    }

    @Test("the end that is through nudges the other: it is through within 0.6 s of its checks being answered again, where libnice's own schedule takes over 1.5 s")
    func throughSoonAfterAnswersReturn() async throws {
        let nudged = try await Self.call(nudging: true)
        #expect(nudged.dropped > 0 && nudged.labBeforeLift > 0.5, "the scenario did not happen: one end through, the other's checks unanswered")
        #expect(nudged.hereAfterLift < 0.6)
        let alone = try await Self.call(nudging: false)
        #expect(alone.dropped > 0 && alone.labBeforeLift > 0.5, "the scenario did not happen: one end through, the other's checks unanswered")
        #expect(alone.hereAfterLift > 1.5)
    }
}
