import ECVProtocol
import Soup
import Synchronization

/// The AppRTC room server (`/join`, `/message`, `/leave`) and the collider (`/ws` and its HTTP
/// side) over one registry, so a payload is stored, queued or relayed by one rule whatever
/// transport brought it (docs/protocol.md §2).
final class RoomHub: Sendable {
    private let registry = Mutex(RoomRegistry())
    let open = OpenSockets()
    /// Each accepted collider socket's reader, until it handled the close: a client registering
    /// again awaits its previous socket's reader (see `awaitPreviousSocket`).
    private let readers = Mutex<[ObjectIdentifier: Task<Void, Never>]>([:])
    private let log: ServiceEventLog
    /// Decides which slot a collider socket's credential may register for (set once the ACD exists).
    private let access = Mutex<@Sendable (_ room: String, _ token: String?) -> CallAccess>({ _, _ in .open })

    private let presence: CallerPresence

    init(log: ServiceEventLog, limits: ServiceLimits, presence: CallerPresence) {
        self.log = log
        self.presence = presence
        registry.withLock { registry in
            registry.maxMessagesPerRoom = limits.maxMessagesPerRoom
            registry.maxMessageBytesPerRoom = limits.maxMessageBytesPerRoom
            registry.maxMessageBytes = limits.maxRoomMessageBytes
            registry.maxRooms = limits.maxLiveCalls
        }
    }

    func authorizeRegistrations(with decide: @escaping @Sendable (_ room: String, _ token: String?) -> CallAccess) {
        access.withLock { $0 = decide }
    }

    // MARK: Room server (HTTP)

    func join(_ roomId: String, as party: CallParty?) -> RoomRegistry.JoinOutcome {
        let outcome = registry.withLock { $0.join(roomId, as: party) }
        switch outcome {
        case .joined(let clientId, let isInitiator, let messages):
            log.record(.room, "\(clientId) joined room \(roomId) as \(isInitiator ? "initiator" : "answerer")"
                + (party.map { " for the \($0)" } ?? "")
                + (messages.isEmpty ? "" : " with \(messages.count) stored message(s)"), rtcId: roomId)
        case .full:
            log.record(.room, "join of room \(roomId) refused: FULL", rtcId: roomId)
        case .invalidRoom:
            log.record(.room, "join of invalid room name refused")
        }
        return outcome
    }

    /// nil: the client belongs to another party's slot (the caller answers 403).
    func post(_ message: SignalingMessage, room roomId: String, client clientId: String, as party: CallParty?) -> RoomResult? {
        let outcome = registry.withLock { $0.relay(message, in: roomId, from: clientId, as: party) }
        logRelay(outcome, message, roomId: roomId, clientId: clientId, via: "HTTP")
        switch outcome {
        case .unknownRoom: return .unknownRoom
        case .unknownClient: return .unknownClient
        case .forbidden: return nil
        case .roomFull: return .error
        case .stored, .queued, .delivered: return .success
        }
    }

    func leave(_ roomId: String, client clientId: String, as party: CallParty?) {
        let socket = registry.withLock { $0.leave(roomId, client: clientId, as: party) }
        if socket != nil, party == .caller { presence.socketClosed(roomId) }
        socket?.close(code: ECVCloseCode.normal, reason: "left the room", log: log, .room)
        log.record(.room, "\(clientId) left room \(roomId)", rtcId: roomId)
    }

    /// The room's call ended (or a script said so): `bye` to every registered socket, which is
    /// then closed with 1000, and the room forgotten.
    @discardableResult
    func closeRoom(_ roomId: String, why: String) -> Bool {
        let closed = registry.withLock { registry -> Bool in
            guard let sockets = registry.close(roomId) else { return false }
            for socket in sockets {
                RoomRegistry.deliver(.message(.bye), on: socket)
                socket.close(code: ECVCloseCode.normal, reason: "room closed", log: log, .room)
            }
            return true
        }
        if closed { log.record(.room, "room \(roomId) closed: \(why)", rtcId: roomId) }
        return closed
    }

    /// Closes the room's collider sockets as a network failure would (no `bye`): the clients keep
    /// their slots and what is sent to them is queued until they register again. Returns how
    /// many sockets were closed.
    func dropSockets(_ roomId: String, code: UInt16, reason: String) -> Int {
        let sockets = registry.withLock { $0.rooms[roomId]?.clients.compactMap(\.socket) ?? [] }
        for socket in sockets { socket.close(code: code, reason: reason, log: log, .collider) }
        return sockets.count
    }

    var roomCount: Int { registry.withLock { $0.rooms.count } }

    // MARK: Collider (WebSocket)

    /// - Parameter token: the credential of the upgrade request (docs/protocol.md §1.9), checked
    ///   when the socket registers for a room slot.
    func accept(_ connection: WebSocketConnection, token: String?) {
        open.insert(connection)
        let id = ObjectIdentifier(connection)
        // Under the lock, so the reader cannot finish (and remove itself) before it is recorded.
        readers.withLock { recorded in
            recorded[id] = watch(connection, log: log, .collider, onText: { [self] text in
                await receive(text, on: connection, token: token)
            }, onClosed: { [self] code, _ in
                // Payloads the socket accepted after its peer began closing were never written:
                // they wait for the client's next socket, ahead of what was queued since.
                let unsent = await connection.unsentTexts().compactMap { text -> SignalingMessage? in
                    let delivery = try? ECVJSON.decode(ColliderDelivery.self, from: text) // only `deliver` wrote here: it decodes
                    // An error delivery is moot once the socket is gone; a payload is not.
                    guard case .message(let message)? = delivery else { return nil }
                    return message
                }
                let registration = registry.withLock { $0.unregister(connection, requeueing: unsent) }
                open.remove(connection)
                if let registration, registration.party == .caller { presence.socketClosed(registration.room) }
                if let registration {
                    log.record(.collider, "socket of \(registration.client) in room \(registration.room) closed (\(code))"
                        + (unsent.isEmpty ? "" : "; \(unsent.count) unwritten message(s) queued again"), rtcId: registration.room)
                }
                readers.withLock { $0[id] = nil }
            })
        }
    }

    /// A client that registers again while its previous socket is still closing (the drop a
    /// reconnecting SDK saw first) is registered once that socket's reader handled its close: the
    /// texts the client sent on it before it saw the close are relayed first (not refused as
    /// "send before register", nor overtaken by what it sends on the new socket), and what that
    /// socket could not write is queued again before the new one takes the queue. The wait ends
    /// when libsoup reports the old socket closed, at the latest after its close timeout (5 s).
    /// An open previous socket is simply replaced (4409), as before.
    private func awaitPreviousSocket(of clientId: String, in roomId: String, as party: CallParty?,
                                     registering connection: WebSocketConnection) async {
        guard let previous = registry.withLock({ $0.socket(room: roomId, client: clientId, as: party) }),
              previous !== connection, previous.state != .open,
              let reader = readers.withLock({ $0[ObjectIdentifier(previous)] }) else { return }
        await reader.value
    }

    private func receive(_ text: String, on connection: WebSocketConnection, token: String?) async {
        let command: ColliderCommand
        do {
            command = try ECVJSON.decode(ColliderCommand.self, from: text)
        } catch {
            RoomRegistry.deliver(.failure("invalid command: \(error)"), on: connection)
            log.record(.collider, "invalid collider frame refused: \(error)")
            return
        }
        switch command {
        case .register(let roomId, let clientId):
            let decision = access.withLock { $0 }(roomId, token)
            switch decision {
            case .open, .granted:
                await awaitPreviousSocket(of: clientId, in: roomId, as: decision.party, registering: connection)
                register(connection, room: roomId, client: clientId, as: decision.party)
            case .missingCredential, .denied, .unknownCall, .notDialed:
                RoomRegistry.deliver(.failure("this socket's credential may not register client \(clientId) in room \(roomId)"),
                                     on: connection)
                connection.close(code: ECVCloseCode.unauthorized, reason: "not authorized", log: log, .collider)
                log.record(.collider, "register of \(clientId) in room \(roomId) refused (4401): \(decision)", rtcId: roomId)
            }
        case .send(let message):
            let outcome = registry.withLock { registry -> RoomRegistry.RelayOutcome? in
                guard let registration = registry.registrations[ObjectIdentifier(connection)] else { return nil }
                return registry.relay(message, in: registration.room, from: registration.client, as: registration.party)
            }
            guard let outcome else {
                RoomRegistry.deliver(.failure("send before register"), on: connection)
                return
            }
            if outcome == .roomFull { RoomRegistry.deliver(.failure("the room keeps too many payloads already"), on: connection) }
            let registration = registry.withLock { $0.registrations[ObjectIdentifier(connection)] }
            logRelay(outcome, message, roomId: registration?.room ?? "?", clientId: registration?.client ?? "?", via: "socket")
        }
    }

    private func register(_ connection: WebSocketConnection, room roomId: String, client clientId: String, as party: CallParty?) {
        enum Outcome { case alreadyRegistered, notJoined, otherSlot, registered(replaced: Bool, flushed: Int) }
        let outcome = registry.withLock { registry -> Outcome in
            if registry.registrations[ObjectIdentifier(connection)] != nil { return .alreadyRegistered }
            if let room = registry.rooms[roomId], room.index(of: clientId) != nil, !room.allows(party, toActAs: clientId) {
                RoomRegistry.deliver(.failure("client \(clientId) holds the other party's slot"), on: connection)
                connection.close(code: ECVCloseCode.unauthorized, reason: "not authorized", log: log, .collider)
                return .otherSlot
            }
            guard let (replaced, flushed) = registry.register(connection, room: roomId, client: clientId, as: party) else {
                RoomRegistry.deliver(.failure("client \(clientId) has not joined room \(roomId)"), on: connection)
                connection.close(code: ECVCloseCode.notFound, reason: "not joined", log: log, .collider)
                return .notJoined
            }
            replaced?.close(code: ECVCloseCode.replaced, reason: "replaced by a newer registration", log: log, .collider)
            return .registered(replaced: replaced != nil, flushed: flushed)
        }
        switch outcome {
        case .alreadyRegistered:
            RoomRegistry.deliver(.failure("this socket is already registered"), on: connection)
        case .notJoined:
            log.record(.collider, "register of \(clientId) in room \(roomId) refused: not joined (4404)", rtcId: roomId)
        case .otherSlot:
            log.record(.collider, "register of \(clientId) in room \(roomId) refused: another party's slot (4401)", rtcId: roomId)
        case .registered(let replaced, let flushed):
            if party == .caller, !replaced { presence.socketOpened(roomId) }
            log.record(.collider, "\(clientId) registered in room \(roomId)" + (replaced ? ", replacing its older socket" : "")
                + (flushed > 0 ? "; \(flushed) queued message(s) delivered" : ""), rtcId: roomId)
        }
    }

    // MARK: Collider (HTTP side under wss_post_url)

    func colliderPost(_ message: SignalingMessage, room roomId: String, client clientId: String, as party: CallParty?) -> RoomResult? {
        post(message, room: roomId, client: clientId, as: party)
    }

    /// Unregisters and closes the client's socket; false when the client has none (or is not `party`'s).
    func colliderDelete(room roomId: String, client clientId: String, as party: CallParty?) -> Bool {
        let socket = registry.withLock { registry -> WebSocketConnection? in
            guard let socket = registry.socket(room: roomId, client: clientId, as: party) else { return nil }
            _ = registry.unregister(socket)
            return socket
        }
        if socket != nil, party == .caller { presence.socketClosed(roomId) }
        socket?.close(code: ECVCloseCode.normal, reason: "unregistered", log: log, .collider)
        log.record(.collider, "\(clientId) in room \(roomId) unregistered over HTTP", rtcId: roomId)
        return socket != nil
    }

    func closeAll(code: UInt16, reason: String) {
        open.closeAll(code: code, reason: reason, log: log, .room)
    }

    private func logRelay(_ outcome: RoomRegistry.RelayOutcome, _ message: SignalingMessage, roomId: String,
                          clientId: String, via transport: String) {
        let what: String = switch outcome {
        case .stored: "stored for the next joiner"
        case .queued: "queued until the peer registers"
        case .delivered: "relayed"
        case .unknownRoom: "refused: UNKNOWN_ROOM"
        case .unknownClient: "refused: UNKNOWN_CLIENT"
        case .forbidden: "refused: the client is another party's"
        case .roomFull: "refused: the room keeps as many payloads or bytes as it may"
        }
        let category: ServiceLogEntry.Category = transport == "HTTP" ? .room : .collider
        log.record(category, "\(message.kind.rawValue) from \(clientId) in room \(roomId) (\(transport)) \(what)", rtcId: roomId)
    }
}
