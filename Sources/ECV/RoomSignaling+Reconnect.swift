import ECVProtocol
import GLibCore
import Soup

/// Reconnection (docs/protocol.md §9): a dropped collider socket is reopened with backoff and
/// registered again as the same client within `reconnectWindow` (`SocketReconnection`'s loop);
/// what the old socket never wrote and what waited meanwhile is sent on the new one, once and in
/// order.
extension RoomSignaling {
    /// A close the collider chose as an answer is final; a lost or dropped connection is not.
    static func reconnection(window: Duration) -> SocketReconnection {
        SocketReconnection(window: window, answers: [ECVCloseCode.normal, ECVCloseCode.unauthorized, ECVCloseCode.notFound, ECVCloseCode.replaced])
    }

    /// Serves on `reopened` in place of `lost`: installed, registered, and what waits sent.
    func resume(_ reopened: WebSocketConnection, after lost: WebSocketConnection) async -> SocketReconnection.Resumption {
        // Everything the old socket accepted has reached it by now; what it could not write goes
        // first, ahead of what waited meanwhile. It joins the queue before the new socket is
        // installed, so whichever registration comes next sends it: this one, or the one after
        // the new socket's own reconnection should it close at once (put back only after a
        // failed register, it could land behind a queue that reconnection had already flushed,
        // and wait for a drop that may never come).
        let unsent = await lost.unsentTexts()
        let installed = state.withLock { state -> Bool in
            state.pending = unsent + state.pending
            guard !state.closing else { return false }
            state.socket = reopened
            return true
        }
        guard installed else {
            // Closed while reconnecting: the new socket has no one to serve.
            try? reopened.close(code: 1000, reason: "leaving") // it may have closed already: either way it is closed
            return .stopped
        }
        do { try register() } catch {
            // The new socket closed at once: reading it reconnects again; what waits stays queued.
            Logger.warn("signaling: room \(room): registering again failed: \(error)")
            return .lostAgain
        }
        return .resumed
    }

    /// The loop's events as the room's: a participant that left hears nothing more.
    func reportReconnection(_ event: SocketReconnection.Event) {
        switch event {
        case .reconnecting(let code, let reason):
            broadcaster.yield(.reconnecting(reason: "closed (\(code)\(reason.isEmpty ? "" : " \(reason)"))"))
        case .reconnected:
            broadcaster.yield(.reconnected)
        case .closedForGood(let code, let reason, nil):
            closedForGood(code: code, reason: reason)
        case .closedForGood(let code, let reason, let failure?):
            guard !state.value.closing else { return }
            Logger.warn("signaling: room \(room): reconnecting failed: \(failure)")
            closedForGood(code: code, reason: "\(reason.isEmpty ? "connection lost" : reason); reconnecting failed")
        }
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
