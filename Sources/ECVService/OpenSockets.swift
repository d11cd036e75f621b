import Soup
import Synchronization

/// The WebSockets one endpoint accepted and has not seen close yet: what `stop()` closes with
/// 1001 and then waits for.
final class OpenSockets: Sendable {
    private struct State {
        var sockets: [ObjectIdentifier: WebSocketConnection] = [:]
        var emptyWaiters: [CheckedContinuation<Void, Never>] = []
        /// Set once a stopping service gave up waiting: later waits return at once.
        var released = false
    }

    private let state = Mutex(State())

    var count: Int { state.withLock { $0.sockets.count } }

    func insert(_ connection: WebSocketConnection) {
        state.withLock { $0.sockets[ObjectIdentifier(connection)] = connection }
    }

    func remove(_ connection: WebSocketConnection) {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.sockets[ObjectIdentifier(connection)] = nil
            guard state.sockets.isEmpty else { return [] }
            defer { state.emptyWaiters.removeAll() }
            return state.emptyWaiters
        }
        waiters.forEach { $0.resume() }
    }

    /// Starts the closing handshake on every socket still open.
    func closeAll(code: UInt16, reason: String, log: ServiceEventLog, _ category: ServiceLogEntry.Category) {
        let sockets = state.withLock { Array($0.sockets.values) }
        for socket in sockets { socket.close(code: code, reason: reason, log: log, category) }
    }

    /// Returns once every socket reported `.closed`, or when `releaseWaiters()` gives up on them.
    func waitUntilEmpty() async {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state -> Bool in
                if state.sockets.isEmpty || state.released { return true }
                state.emptyWaiters.append(continuation)
                return false
            }
            if ready { continuation.resume() }
        }
    }

    func releaseWaiters() {
        let waiters = state.withLock { state in
            state.released = true
            defer { state.emptyWaiters.removeAll() }
            return state.emptyWaiters
        }
        waiters.forEach { $0.resume() }
    }
}

/// Reads a server-side WebSocket until it closes: every text (or binary, read as UTF-8) frame to
/// `onText`, each awaited before the next, then `onClosed` once. The task holds the connection,
/// so it stays open as long as the peer keeps it open; it ends once `onClosed` returned (what
/// the collider awaits before a client's next socket registers). Errors are logged: a client
/// that does not read what it is sent is closed with 1008, one that sends faster than the
/// service reads is dropped, each logged so ("outgoing backlog", "incoming backlog").
@discardableResult
func watch(_ connection: WebSocketConnection, log: ServiceEventLog, _ category: ServiceLogEntry.Category,
           onText: @escaping @Sendable (String) async -> Void,
           onClosed: @escaping @Sendable (_ code: UInt16, _ reason: String) async -> Void) -> Task<Void, Never> {
    Task {
        for await event in connection.events {
            switch event {
            case .text(let text): await onText(text)
            case .binary(let bytes): await onText(String(decoding: bytes, as: UTF8.self))
            case .error(let message): log.record(category, "socket \(connection.url): \(message)")
            case .closed(let code, let reason): await onClosed(code, reason)
            }
        }
    }
}
