import ECVProtocol
import Foundation
import GLibCore
import GStreamer
import Soup

/// What a queue wait reports to its call.
enum QueueUpdate: Sendable {
    case polled(QueueInfoResponse)
    case pushed(QueueSocketMessage)
    /// The queue socket closed without a terminal push first (and could not be reopened).
    case socketClosed(code: UInt16, reason: String)
    /// The queue socket dropped; it is being reopened (the reason it dropped).
    case reconnecting(String)
    /// A reopened queue socket is attached again.
    case reconnected
    case failed(ErrorName, String)
}

/// How a call waits for its agent and hears about the call's life afterwards.
protocol QueueWaiter: Sendable {
    func stop()
}

/// Legacy and queue-info polling: one GET per interval for the whole call, because polling is
/// how such a client learns of transfers and service-side ends (docs/protocol.md §1.5).
final class PollingWaiter: QueueWaiter {
    private let task = Locked<Task<Void, Never>?>(nil)

    /// - Parameter notFoundLimit: consecutive `not found` answers before the wait fails; each one
    ///   is reported (`.polled`) first, and any other answer resets the count.
    init(service: ServiceClient, prefix: String, rtcId: String, callerToken: String?, interval: Duration, failureLimit: Int,
         notFoundLimit: Int, onUpdate: @escaping @Sendable (QueueUpdate) -> Void) {
        let polling = Task {
            var failures = 0
            var notFound = 0
            while !Task.isCancelled {
                do {
                    let answer = try await service.poll(prefix: prefix, rtcId: rtcId, callerToken: callerToken, retryWindow: interval)
                    failures = 0
                    notFound = answer.state == .notFound ? notFound + 1 : 0
                    onUpdate(.polled(answer))
                    if [.transferred, .ended].contains(answer.state) { return }
                    if notFound >= max(1, notFoundLimit) {
                        onUpdate(.failed(.ERROR_WAITING_FOR_ROOM,
                                         "the service answered not found for call \(rtcId) \(notFound) polls in a row"))
                        return
                    }
                } catch {
                    failures += 1
                    if failures >= max(1, failureLimit) {
                        onUpdate(.failed(.ERROR_WAITING_FOR_ROOM, "polling \(prefix)\(rtcId) failed \(failures) times: \(error)"))
                        return
                    }
                }
                // Cancelled: the wait ends early and the loop or the guard after it decides.
                try? await Task.sleep(for: interval)
            }
        }
        task.withLock { $0 = polling }
    }

    func stop() { task.value?.cancel() }
}

/// The v1.75+ queue socket, open for the whole call: pushes agent connected, transfers and the end.
///
/// A socket that drops without a terminal push (a network cut, a service restart, a proxy
/// recycling connections) is reopened with backoff for up to the reconnect window; the
/// service's greeting on the new socket carries the call's state, so a push sent during the gap
/// is replaced by the state it led to (docs/protocol.md §9). Closes that are answers (1000 after
/// the end, 4400/4401/4404, 4409 replaced) are not retried.
final class QueueSocketWaiter: QueueWaiter {
    private struct Link {
        var socket: WebSocketConnection?
        var task: Task<Void, Never>?
        var stopped = false
    }
    private let link = Locked(Link())

    /// Opens the socket; false (after reporting `.failed`) when it cannot be opened within `window`.
    func start(url: String, callerToken: String?, options: WebSocketClient.Options, connectTimeout: Duration,
               window: Duration, onUpdate: @escaping @Sendable (QueueUpdate) -> Void) async -> Bool {
        let connect: @Sendable () async throws(HTTPError) -> WebSocketConnection = {
            try await WebSocketClient.connect(url: url, headers: ServiceClient.credentialHeaders(callerToken),
                                              connectTimeout: connectTimeout, options: options)
        }
        let first: WebSocketConnection
        do { first = try await retrying(within: window, isTransient: \.isTransient, connect) } catch {
            onUpdate(.failed(.QUEUE_SOCKET_CLOSED, "cannot open the queue socket \(url): \(error)"))
            return false
        }
        guard link.withLock({ state -> Bool in
            state.socket = first
            return !state.stopped
        }) else { try? first.close(code: 1000, reason: "call over"); return true } // stopped meanwhile: closing is all that is left
        let task = Task { [link] in
            await Self.reconnection(window: window).run(
                from: first,
                read: { connection in
                    let (code, reason, terminal) = await Self.read(connection, onUpdate: onUpdate)
                    return terminal || link.value.stopped ? .finished : .closed(code: code, reason: reason)
                },
                reopen: { () async throws(HTTPError) in try await connect() },
                isTransient: \.isTransient,
                resume: { reopened, _ in
                    guard link.withLock({ state -> Bool in
                        state.socket = reopened
                        return !state.stopped
                    }) else { try? reopened.close(code: 1000, reason: "call over"); return .stopped } // stopped meanwhile: closing is all that is left
                    return .resumed
                },
                report: { event in
                    switch event {
                    case .reconnecting(let code, let reason):
                        onUpdate(.reconnecting("the queue socket closed (\(code)\(reason.isEmpty ? "" : " \(reason)"))"))
                    case .reconnected:
                        onUpdate(.reconnected)
                    case .closedForGood(let code, let reason, nil):
                        onUpdate(.socketClosed(code: code, reason: reason))
                    case .closedForGood(let code, let reason, let failure?):
                        if !link.value.stopped {
                            onUpdate(.socketClosed(code: code, reason: "\(reason.isEmpty ? "connection lost" : reason); reconnecting failed: \(failure)"))
                        }
                    }
                })
        }
        link.withLock { $0.task = task }
        return true
    }

    /// Delivers the socket's pushes until it closes: the close code and reason, and whether a
    /// terminal push came first.
    private static func read(_ connection: WebSocketConnection, onUpdate: @Sendable (QueueUpdate) -> Void)
        async -> (code: UInt16, reason: String, terminal: Bool) {
        var sawTerminal = false
        for await event in connection.events {
            switch event {
            case .text(let text):
                // An undecodable message is logged and skipped: the socket's next message may be fine.
                guard let message = try? ECVJSON.decode(QueueSocketMessage.self, from: text) else {
                    Logger.warn("queue socket: ignoring an undecodable message: \(text.prefix(200))")
                    continue
                }
                if message.isTerminal { sawTerminal = true }
                onUpdate(.pushed(message))
            case .closed(let code, let reason):
                return (code, reason, sawTerminal)
            case .binary, .error:
                continue
            }
        }
        return (1006, "connection lost", sawTerminal)
    }

    /// A close the service chose as an answer is final; a lost or dropped connection is not.
    static func reconnection(window: Duration) -> SocketReconnection {
        SocketReconnection(window: window, answers: [ECVCloseCode.normal, ECVCloseCode.badRequest, ECVCloseCode.unauthorized,
                                                     ECVCloseCode.notFound, ECVCloseCode.replaced])
    }

    func stop() {
        let (socket, task) = link.withLock { state in
            state.stopped = true
            return (state.socket, state.task)
        }
        // Closing a socket the service may already have closed: either way it is closed.
        try? socket?.close(code: 1000, reason: "call over")
        task?.cancel()
    }
}
