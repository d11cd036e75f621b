package import GLibCore

/// How the SDK keeps one WebSocket for as long as it is needed (docs/protocol.md §9): a close the
/// server chose as an answer is final; any other close (a network cut, a restart, a proxy
/// recycling connections) is a loss, and the socket is reopened with backoff within `window`,
/// then read on. One policy value and one loop for the collider socket and the queue socket;
/// the hooks say what differs (how to open, what to do with a reopened socket).
package struct SocketReconnection: Sendable {
    /// How one socket's reading ended.
    package enum Ending: Sendable {
        /// The socket closed: an answer (final) or a loss (reopened).
        case closed(code: UInt16, reason: String)
        /// Nothing is left to reconnect for (a terminal push came, or the owner stopped).
        case finished
    }

    /// What the owner of a reopened socket made of it.
    package enum Resumption: Sendable {
        /// Serving again: reported as `.reconnected`, then read.
        case resumed
        /// It failed at once (e.g. a register could not be written): read to its close, which
        /// reconnects again; nothing is reported.
        case lostAgain
        /// The owner stopped meanwhile (and closed it): the loop ends.
        case stopped
    }

    /// What the loop reports, in order.
    package enum Event: Sendable, Equatable {
        /// A lost socket is being reopened (its close code and reason).
        case reconnecting(code: UInt16, reason: String)
        /// A reopened socket serves again.
        case reconnected
        /// The socket closed for good: as an answer (`failure` nil), or it could not be reopened
        /// within the window (`failure` says why the last attempt failed).
        case closedForGood(code: UInt16, reason: String, failure: String?)
    }

    /// How long a lost socket is reopened for (0: never).
    package var window: Duration
    package var backoff: Backoff
    /// The close codes the server sends as answers.
    package var answers: Set<UInt16>

    package init(window: Duration, answers: Set<UInt16>, backoff: Backoff = Backoff()) {
        self.window = window
        self.answers = answers
        self.backoff = backoff
    }

    /// Whether a socket closed with `code` is reopened.
    package func mayReconnect(afterClose code: UInt16) -> Bool {
        window > .zero && !answers.contains(code)
    }

    /// Reads `first` (already in its owner's hands) until it ends; a lost socket is reopened
    /// (`reopen`, retried while `isTransient` within the window) and handed to `resume`, then
    /// read in turn. Returns once a reading finished, a close was final, reopening failed or the
    /// owner stopped. A cancelled task stops at the next attempt.
    package func run<Failure: Error & Sendable>(
        from first: WebSocketConnection,
        read: (WebSocketConnection) async -> Ending,
        reopen: () async throws(Failure) -> WebSocketConnection,
        isTransient: (Failure) -> Bool,
        resume: (_ reopened: WebSocketConnection, _ lost: WebSocketConnection) async -> Resumption,
        report: (Event) -> Void
    ) async {
        var connection = first
        while true {
            guard case .closed(let code, let reason) = await read(connection) else { return }
            guard mayReconnect(afterClose: code) else {
                return report(.closedForGood(code: code, reason: reason, failure: nil))
            }
            report(.reconnecting(code: code, reason: reason))
            let reopened: WebSocketConnection
            do {
                reopened = try await retrying(within: window, backoff: backoff, isTransient: isTransient, reopen)
            } catch {
                return report(.closedForGood(code: code, reason: reason, failure: "\(error)"))
            }
            switch await resume(reopened, connection) {
            case .resumed: report(.reconnected)
            case .lostAgain: break
            case .stopped: return
            }
            connection = reopened
        }
    }
}
