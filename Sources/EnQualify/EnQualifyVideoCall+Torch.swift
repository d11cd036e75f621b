import ECV
import ECVProtocol
import Foundation
import GLibCore

/// The agent's torch requests: the user's approval, then the app's torch (docs/protocol.md §4).
extension EnQualifyVideoCall {
    /// The user's answer to the agent's `flashOpen` request; the agent hears `ACCEPTED` (and the
    /// torch is on), `REFUSED`, or `UNAVAILABLE` when the device has no `torch`.
    public func openTorch(isApproved: Bool) throws(EnQualifyError) { try answerTorch(.flashOpen, isApproved) }

    /// The user's answer to the agent's `flashClose` request.
    public func closeTorch(isApproved: Bool) throws(EnQualifyError) { try answerTorch(.flashClose, isApproved) }

    private func answerTorch(_ event: AgentRequestEvent, _ approved: Bool) throws(EnQualifyError) {
        _ = try liveConnection()
        let pending = state.withLock { state -> PendingTorch? in
            guard let pending = state.pendingTorch, pending.event == event else { return nil }
            state.pendingTorch = nil
            return pending
        }
        guard let pending else { throw .noPendingTorchRequest }
        pending.reply.resolve(.success(approved))
    }

    /// The agent asked for the torch: `agentRequest`, then the user's answer (never assumed: no
    /// answer within the settings' timeout refuses).
    func askTorchApproval(turningOn: Bool, timeout: Duration) async -> Bool {
        let event: AgentRequestEvent = turningOn ? .flashOpen : .flashClose
        let reply = OneShot<Bool, Never>()
        let replaced = state.withLock { state in defer { state.pendingTorch = PendingTorch(event: event, reply: reply) }; return state.pendingTorch }
        replaced?.reply.resolve(.success(false))
        announce(event)
        let timer = Task {
            try? await Task.sleep(for: timeout) // cancelled once answered: the answer decided
            guard !Task.isCancelled else { return }
            self.state.withLock { state in if state.pendingTorch?.reply === reply { state.pendingTorch = nil } }
            reply.resolve(.success(false))
        }
        let approved = await reply.value()
        timer.cancel()
        return approved
    }
}

/// The ECV connection's flashlight handler for an EnQualify call: the approval is the user's
/// answer through `openTorch`/`closeTorch`, the switch is the app's `torch`.
struct TorchBridge: FlashlightHandler {
    weak let owner: EnQualifyVideoCall?
    let approvalTimeout: Duration

    func approve(turningOn: Bool) async -> Bool {
        guard let owner else { return false }
        return await owner.askTorchApproval(turningOn: turningOn, timeout: approvalTimeout)
    }

    func setTorch(on: Bool) async -> Bool {
        guard let torch = owner?.torch else { return false }
        return await torch.setTorch(on: on)
    }
}
