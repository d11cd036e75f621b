import ECVProtocol
import Foundation
import GLibCore
import GStreamer
import Soup

/// What a queue wait reports to its call.
enum QueueUpdate: Sendable {
    case polled(QueueInfoResponse)
    case pushed(QueueSocketMessage)
    /// The queue socket closed without a terminal push first.
    case socketClosed(code: UInt16, reason: String)
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
                    let answer = try await service.poll(prefix: prefix, rtcId: rtcId, callerToken: callerToken)
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
final class QueueSocketWaiter: QueueWaiter {
    private let socket = Locked<WebSocketConnection?>(nil)
    private let reader = Locked<Task<Void, Never>?>(nil)
    private let stopped = Locked(false)

    /// Opens the socket; false (after reporting `.failed`) when it cannot be opened.
    func start(url: String, callerToken: String?, options: WebSocketClient.Options, connectTimeout: Duration,
               onUpdate: @escaping @Sendable (QueueUpdate) -> Void) async -> Bool {
        let connection: WebSocketConnection
        do {
            connection = try await WebSocketClient.connect(url: url, headers: ServiceClient.credentialHeaders(callerToken),
                                                           connectTimeout: connectTimeout,
                                                           options: options)
        } catch {
            onUpdate(.failed(.QUEUE_SOCKET_CLOSED, "cannot open the queue socket \(url): \(error)"))
            return false
        }
        socket.withLock { $0 = connection }
        let stopped = self.stopped
        let reading = Task {
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
                    if !sawTerminal, !stopped.value { onUpdate(.socketClosed(code: code, reason: reason)) }
                    return
                case .binary, .error:
                    continue
                }
            }
            if !sawTerminal, !stopped.value { onUpdate(.socketClosed(code: 1006, reason: "connection lost")) }
        }
        reader.withLock { $0 = reading }
        return true
    }

    func stop() {
        stopped.withLock { $0 = true }
        // Closing a socket the service may already have closed: either way it is closed.
        try? socket.value?.close(code: 1000, reason: "call over")
        reader.value?.cancel()
    }
}
