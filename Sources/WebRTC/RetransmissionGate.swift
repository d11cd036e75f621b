import Foundation
import GLibCore
import GStreamer
import MediaPipeline

/// The send path's `RetransmissionBudget`, consulted from the RTP session's thread for each of the
/// far end's resend requests, fed the round trip from each stats sample and the target from the
/// bandwidth adaptation.
final class RetransmissionGate: Sendable {
    private struct State {
        var budget = RetransmissionBudget()
        var roundTrip = 0.0
    }
    private let state = Locked(State())

    /// Resends may take their share of `targetKbps` from now on (adapting senders only; until
    /// then every request is answered, once a round trip).
    func follow(targetKbps: Int) { state.withLock { $0.budget.follow(estimateKbps: targetKbps) } }

    func noteRoundTrip(_ seconds: Double?) {
        guard let seconds, seconds > 0 else { return }
        state.withLock { $0.roundTrip = seconds }
    }

    func admit(ssrc: UInt32, seqnum: UInt16) -> Bool {
        let now = Double(DispatchTime.now().uptimeNanoseconds) / 1e9
        return state.withLock { $0.budget.admit(ssrc: ssrc, seqnum: seqnum, at: now, roundTrip: $0.roundTrip) }
    }
}
