import GLibCore
import WebRTC

/// How a connection follows its peer's state: `WebRtcConnected` when media connects, one
/// `WebRtcDisconnected`/`WebRtcFailed` per loss, a recovery that counts only once packets flow
/// again, and `PEER_DISCONNECTED` when a loss outlasts `connectionTimeout` (docs/protocol.md §9).
extension WebRtcConnection {
    func peerStateChanged(_ peerState: PeerState) {
        switch peerState {
        case .connected:
            let (first, lost) = state.withLock { state in
                (!state.live.connectedOnce, state.live.recoveryDeadline != nil)
            }
            if first || !lost { connectionConfirmed(first: first) } else { confirmRecovery() }
        case .disconnected, .failed:
            // The leg rebuilds a failed peer (webrtcbin cannot restart ICE). One loss is
            // reported once, however often ICE flaps in it.
            let report = state.withLock { state -> Bool in
                state.live.connected = false
                state.live.recoveryCheck?.cancel()
                state.live.recoveryCheck = nil
                return state.live.lossReported.insert(peerState).inserted
            }
            if report { call.emit(peerState == .failed ? .WebRtcFailed : .WebRtcDisconnected) }
            armRecoveryDeadline()
        default:
            break
        }
    }

    /// The media connection is up: `WebRtcConnected` (and `ConnectionTimeoutEnd` the first time).
    private func connectionConfirmed(first: Bool) {
        state.withLock { state in
            state.live.connectedOnce = true
            state.live.connected = true
            state.live.lossReported = []
            state.live.recoveryCheck = nil
            state.live.recoveryDeadline?.cancel()
            state.live.recoveryDeadline = nil
        }
        call.emit(.WebRtcConnected, data: connectedCodecData)
        if first { call.emit(.ConnectionTimeoutEnd) }
    }

    /// ICE says connected again after a loss. When the remote died, ICE can flap back to
    /// connected on a stale pair with nothing behind it: the recovery counts (and
    /// `WebRtcConnected` is reported) only once packets arrive again, checked every 200 ms while
    /// the recovery deadline runs. A remote that never sent media is taken at ICE's word.
    private func confirmRecovery() {
        let sentMedia = !(leg?.remoteKinds.isEmpty ?? true)
        guard sentMedia else { connectionConfirmed(first: false); return }
        let check = Task { [weak self] in
            guard let before = await self?.packetsReceived() else { return }
            while !Task.isCancelled {
                // Cancelled: the loss came back or the connection closed; the loop ends.
                try? await Task.sleep(for: .milliseconds(200))
                guard !Task.isCancelled, let self, let now = await self.packetsReceived() else { return }
                if now > before {
                    let current = self.state.withLock { $0.live.recoveryCheck != nil && !$0.live.closed }
                    if current { self.connectionConfirmed(first: false) }
                    return
                }
            }
        }
        let previous = state.withLock { state -> Task<Void, Never>? in
            defer { state.live.recoveryCheck = check }
            return state.live.recoveryCheck
        }
        previous?.cancel()
        keep(check)
    }

    /// Packets received so far on every inbound stream of the current peer.
    private func packetsReceived() async -> UInt64? {
        guard let peer = peerConnection else { return nil }
        do { return try await peer.stats().inbound.reduce(0) { $0 + $1.packetsReceived } } catch { return nil }
    }

    /// A lost connection that does not come back within `connectionTimeout` ends the call.
    private func armRecoveryDeadline() {
        let milliseconds = max(1, parameters.connectionTimeout)
        let task = Task { [weak self] in
            do { try await Task.sleep(for: .milliseconds(milliseconds)) } catch { return } // cancelled: reconnected or closed
            guard let self, !self.state.withLock({ $0.live.connected }) else { return }
            self.call.end(CallEndReason.peerDisconnected)
        }
        let armed = state.withLock { state -> Bool in
            guard state.live.connectedOnce, state.live.recoveryDeadline == nil, !state.live.closed else { return false }
            state.live.recoveryDeadline = task
            return true
        }
        if !armed { task.cancel() }
    }
}
