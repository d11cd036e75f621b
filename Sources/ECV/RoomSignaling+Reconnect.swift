import ECVProtocol
import GLibCore
import Soup

/// Reconnection (docs/protocol.md §9): a dropped collider socket is reopened with backoff and
/// registered again as the same client within `reconnectWindow`; what the old socket never wrote
/// and what waited meanwhile is sent on the new one, once and in order.
extension RoomSignaling {
    /// A close the collider chose as an answer is final; a lost or dropped connection is not.
    static func mayReconnect(afterClose code: UInt16) -> Bool {
        ![ECVCloseCode.normal, ECVCloseCode.unauthorized, ECVCloseCode.notFound, ECVCloseCode.replaced].contains(code)
    }

    /// The current socket closed: reopened and re-registered within the window, or reported.
    /// Runs on the closed socket's reader, which `close()` cancels: a participant that left never
    /// reconnects, and one that leaves while reconnecting stops at the next attempt.
    func socketClosed(_ connection: WebSocketConnection, code: UInt16, reason: String, connectTimeout: Duration) async {
        let proceed = state.withLock { state -> Bool in
            guard state.socket === connection, !state.closing else { return false }
            state.registered = false
            return true
        }
        guard proceed else { return }
        guard Self.mayReconnect(afterClose: code), options.reconnectWindow > .zero else {
            return closedForGood(code: code, reason: reason)
        }
        broadcaster.yield(.reconnecting(reason: "closed (\(code)\(reason.isEmpty ? "" : " \(reason)"))"))
        let reopened: WebSocketConnection
        do {
            reopened = try await retrying(within: options.reconnectWindow, isTransient: { (error: RoomSignalingError) in
                switch error {
                case .socket, .socketConnect: true
                default: false
                }
            }) { () async throws(RoomSignalingError) in
                guard !Task.isCancelled, !self.state.value.closing else { throw .notJoined }
                return try await connectSocket(connectTimeout: connectTimeout)
            }
        } catch {
            guard !state.value.closing else { return }
            Logger.warn("signaling: room \(room): reconnecting failed: \(error)")
            return closedForGood(code: code, reason: "\(reason.isEmpty ? "connection lost" : reason); reconnecting failed")
        }
        // Everything the old socket accepted has reached it by now; what it could not write goes
        // first, ahead of what waited meanwhile. It joins the queue before the new socket is
        // installed, so whichever registration comes next sends it: this one, or the one a
        // reconnection started by the new socket's own reader makes should that socket close at
        // once (put back only after a failed register, it could land behind a queue that
        // reconnection had already flushed, and wait for a drop that may never come).
        let unsent = await connection.unsentTexts()
        state.withLock { $0.pending = unsent + $0.pending }
        guard install(reopened, connectTimeout: connectTimeout) else {
            // Closed while reconnecting: the new socket has no one to serve.
            try? reopened.close(code: 1000, reason: "leaving") // it may have closed already: either way it is closed
            return
        }
        do { try register() } catch {
            // The new socket closed at once: its reader reconnects again; what waits stays queued.
            Logger.warn("signaling: room \(room): registering again failed: \(error)")
            return
        }
        broadcaster.yield(.reconnected)
    }

    /// The socket closed as an answer or could not be reopened: nothing is sent any more.
    private func closedForGood(code: UInt16, reason: String) {
        state.withLock { state in
            state.closing = true
            state.pending = []
        }
        broadcaster.yield(.closed(code: code, reason: reason))
    }
}
