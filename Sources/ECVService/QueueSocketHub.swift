import ECVProtocol
import Soup
import Synchronization

/// The queue sockets (`/api/QueueSocket?rtcId=`, docs/protocol.md §1.7): one attached socket per
/// rtcId receives the ACD's pushes for that call; terminal pushes close it with 1000.
final class QueueSocketHub: Sendable {
    /// rtcId → the socket that receives its pushes (the newest one).
    private let attached = Mutex<[String: WebSocketConnection]>([:])
    let open = OpenSockets()
    private let log: ServiceEventLog
    private let presence: CallerPresence

    init(log: ServiceEventLog, presence: CallerPresence) {
        self.log = log
        self.presence = presence
    }

    func accept(_ connection: WebSocketConnection, request: HTTPServerRequest, engine: ACDEngine) {
        open.insert(connection)
        let rtcId = request.queryValue(ECVAPI.rtcIdQueryName) ?? ""
        watch(connection, log: log, .queueSocket, onText: { _ in }, onClosed: { [self] code, reason in
            let wasAttached = attached.withLock { map -> Bool in
                guard let current = map[rtcId], current === connection else { return false }
                map[rtcId] = nil
                return true
            }
            open.remove(connection)
            if wasAttached {
                presence.socketClosed(rtcId)
                log.record(.queueSocket, "queue socket of \(rtcId) closed (\(code) \(reason))", rtcId: rtcId)
            }
        })
        guard !rtcId.isEmpty else {
            log.record(.queueSocket, "queue socket without rtcId refused (4400)")
            connection.close(code: ECVCloseCode.badRequest, reason: "the rtcId query parameter is missing", log: log, .queueSocket)
            return
        }
        let access = engine.callerAccess(rtcId: rtcId, token: callCredential(of: request))
        guard access.allowsCallerRead else {
            // Refused before attaching: the caller's own socket stays attached and hears nothing of it.
            log.record(.queueSocket, "queue socket for \(rtcId) refused (4401): \(access)", rtcId: rtcId)
            let code: ServiceErrorCode = access == .denied ? .forbidden : .unauthorized
            send(.error(code: code, message: "the queue socket needs this call's caller token"), on: connection)
            connection.close(code: ECVCloseCode.unauthorized, reason: code.rawValue, log: log, .queueSocket)
            return
        }
        log.record(.queueSocket, "queue socket for \(rtcId) opened", rtcId: rtcId)
        engine.attachQueueSocket(rtcId: rtcId) { [self] greeting in
            attach(connection, rtcId: rtcId, greeting: greeting)
        }
    }

    /// Runs in the ACD's event order: the greeting is the state before every later push.
    private func attach(_ connection: WebSocketConnection, rtcId: String, greeting: [QueueSocketMessage]) {
        let terminal = greeting.last.map(\.isTerminal) ?? false
        let sent = attached.withLock { map -> Bool in
            // Checked under the lock the close handler takes too, so a socket that closed before
            // its greeting is never left attached.
            guard connection.state == .open else { return false }
            if !terminal {
                // The caller holds one queue socket whether or not it replaced an older one.
                if let previous = map.updateValue(connection, forKey: rtcId) {
                    if previous !== connection {
                        previous.close(code: ECVCloseCode.replaced, reason: "replaced by a newer queue socket", log: log, .queueSocket)
                    }
                } else {
                    presence.socketOpened(rtcId)
                }
            }
            for message in greeting { send(message, on: connection) }
            if let last = greeting.last, terminal {
                let isError = last.kind == .error
                connection.close(code: isError ? ECVCloseCode.notFound : ECVCloseCode.normal,
                                 reason: isError ? "unknown rtcId" : "", log: log, .queueSocket)
            }
            return true
        }
        guard sent else { return }
        let kinds = greeting.map(\.kind.rawValue).joined(separator: ", ")
        log.record(.queueSocket, "queue socket of \(rtcId) greeted: \(kinds)", rtcId: rtcId)
    }

    /// A push from the ACD. Dropped when the call has no socket: the greeting of the next one
    /// carries the state.
    func deliver(_ message: QueueSocketMessage, rtcId: String) {
        let delivered = attached.withLock { map -> Bool in
            guard let connection = map[rtcId] else { return false }
            send(message, on: connection)
            if message.isTerminal {
                map[rtcId] = nil
                connection.close(code: ECVCloseCode.normal, reason: "", log: log, .queueSocket)
            }
            return true
        }
        log.record(.queueSocket, "\(rtcId) ← \(message.kind.rawValue)" + (delivered ? "" : " (no socket)"), rtcId: rtcId)
    }

    /// Closes the call's socket without a terminal push.
    func drop(rtcId: String, code: UInt16, reason: String) -> Bool {
        let connection = attached.withLock { $0.removeValue(forKey: rtcId) }
        guard let connection else { return false }
        presence.socketClosed(rtcId)
        connection.close(code: code, reason: reason, log: log, .queueSocket)
        return true
    }

    var attachedRtcIds: [String] { attached.withLock { Array($0.keys).sorted() } }

    func closeAll(code: UInt16, reason: String) {
        attached.withLock { $0.removeAll() }
        open.closeAll(code: code, reason: reason, log: log, .queueSocket)
    }

    private func send(_ message: QueueSocketMessage, on connection: WebSocketConnection) {
        connection.sendJSON(message, log: log, .queueSocket)
    }
}
