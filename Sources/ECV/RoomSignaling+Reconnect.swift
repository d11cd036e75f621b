import ECVProtocol
import GLibCore
import Soup

/// Reconnection (docs/protocol.md §9): a dropped collider socket is reopened with backoff and
/// registered again as the same client within `reconnectWindow`; what could not reach the
/// collider meanwhile is sent again.
extension RoomSignaling {
    /// A close the collider chose as an answer is final; a lost or dropped connection is not.
    static func mayReconnect(afterClose code: UInt16) -> Bool {
        ![ECVCloseCode.normal, ECVCloseCode.unauthorized, ECVCloseCode.notFound, ECVCloseCode.replaced].contains(code)
    }

    /// The current socket closed: reopened and re-registered within the window, or reported.
    func socketClosed(_ connection: WebSocketConnection, code: UInt16, reason: String, connectTimeout: Duration) async {
        let proceed = state.withLock { state -> Bool in
            guard state.socket === connection, !state.closing else { return false }
            state.registered = false
            return true
        }
        guard proceed else { return }
        let noticedAt = ContinuousClock.now
        let why = "closed (\(code)\(reason.isEmpty ? "" : " \(reason)"))"
        guard Self.mayReconnect(afterClose: code), options.reconnectWindow > .zero else {
            broadcaster.yield(.closed(code: code, reason: reason))
            return
        }
        broadcaster.yield(.reconnecting(reason: why))
        let window = options.reconnectWindow
        do {
            let reopened = try await retrying(within: window, isTransient: { (error: RoomSignalingError) in
                if case .socket = error { true } else { false }
            }) { () async throws(RoomSignalingError) in
                guard !self.state.value.closing else { throw .notJoined }
                return try await connectSocket(connectTimeout: connectTimeout)
            }
            let kept = state.withLock { state -> Bool in
                guard !state.closing else { return false }
                return true
            }
            // Closed while reconnecting: the new socket has no one to serve.
            guard kept else { try? reopened.close(code: 1000, reason: "leaving"); return }
            install(reopened, connectTimeout: connectTimeout)
            try register(resending: resendable(unsent: connection.unsentTexts, noticedAt: noticedAt))
            broadcaster.yield(.reconnected)
        } catch {
            guard !state.value.closing else { return }
            Logger.warn("signaling: room \(room): reconnecting failed: \(error)")
            broadcaster.yield(.closed(code: code, reason: "\(reason.isEmpty ? "connection lost" : reason); reconnecting failed"))
        }
    }

    /// What to send again on a new socket, in the original order: whatever the old socket never
    /// sent (`unsent`), and the candidates sent within `resendWindow` before the drop was noticed.
    /// An offer or answer the collider dropped unread in that moment is not repeated (a repeat
    /// would be applied twice): the negotiation then fails or times out as it would without it.
    private func resendable(unsent: [String], noticedAt: ContinuousClock.Instant) -> [String] {
        state.withLock { state in
            let unsentSet = Set(unsent)
            let recent = state.recent.filter { $0.at >= noticedAt - Self.resendWindow && ($0.isCandidate || unsentSet.contains($0.text)) }
                .map(\.text)
            let recentSet = Set(recent)
            state.recent = []
            return unsent.filter { !recentSet.contains($0) } + recent
        }
    }
}
