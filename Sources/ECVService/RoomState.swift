import ECVProtocol
import Soup

/// One client of a room: joined over HTTP, maybe registered on a collider socket.
struct RoomClient {
    let id: String
    /// The call party whose slot this client holds; nil on a service without caller tokens.
    let party: CallParty?
    var socket: WebSocketConnection?
    /// Payloads for this client that arrived after it joined but before its socket registered.
    var pending: [SignalingMessage] = []
    /// The stored payloads its join answer carried, kept until its socket registers: a join
    /// retried because that answer was lost gets them again.
    var handedOver: [SignalingMessage] = []
}

/// An AppRTC room: at most two clients, the first of them the initiator.
struct Room {
    var clients: [RoomClient] = []
    /// Payloads for the client that has not joined yet (handed over in its join answer).
    var stored: [SignalingMessage] = []

    func index(of clientId: String) -> Int? { clients.firstIndex { $0.id == clientId } }

    /// Payloads kept for clients that have not joined or registered yet.
    var keptMessages: Int { stored.count + clients.reduce(0) { $0 + $1.pending.count } }

    /// Whether a request acting as `party` may speak for `clientId` (false for unknown clients).
    func allows(_ party: CallParty?, toActAs clientId: String) -> Bool {
        guard let index = index(of: clientId) else { return false }
        return clients[index].party == nil || clients[index].party == party
    }
}

/// Every room and which collider socket is registered as which client. Mutated only under the
/// `RoomHub`'s lock, which also serialises the sends, so relayed payloads keep their order.
struct RoomRegistry {
    enum JoinOutcome: Equatable {
        case joined(clientId: String, isInitiator: Bool, messages: [SignalingMessage])
        case full
        case invalidRoom
    }

    enum RelayOutcome: Equatable {
        case stored, queued, delivered
        case unknownRoom, unknownClient
        /// The client exists but belongs to another party's slot.
        case forbidden
        /// The room keeps `maxMessagesPerRoom` payloads already.
        case roomFull
    }

    var rooms: [String: Room] = [:]
    /// `ServiceLimits.maxMessagesPerRoom` and `maxLiveCalls` (the most rooms there may be).
    var maxMessagesPerRoom = Int.max
    var maxRooms = Int.max
    /// Collider socket → the (room, client) it registered as.
    var registrations: [ObjectIdentifier: (room: String, client: String, party: CallParty?)] = [:]

    /// Adds a client for `party` (nil: any party, first come). A party's slot is taken once.
    mutating func join(_ roomId: String, as party: CallParty?) -> JoinOutcome {
        guard ECVAPI.isValidRtcId(roomId) else { return .invalidRoom }
        if rooms[roomId] == nil, rooms.count >= maxRooms { return .full }
        var room = rooms[roomId] ?? Room()
        if let party, let index = room.clients.firstIndex(where: { $0.party == party }) {
            // The party's own slot, not yet registered: a retried join (its answer was lost)
            // gets that slot again rather than FULL (docs/protocol.md §9).
            let client = room.clients[index]
            guard client.socket == nil else { return .full }
            return .joined(clientId: client.id, isInitiator: index == 0, messages: client.handedOver)
        }
        guard room.clients.count < 2 else { return .full }
        var clientId: String
        repeat {
            clientId = String(Int.random(in: 10_000_000...99_999_999))
        } while room.index(of: clientId) != nil
        let isInitiator = room.clients.isEmpty
        let messages = isInitiator ? [] : room.stored
        if !isInitiator { room.stored = [] }
        room.clients.append(RoomClient(id: clientId, party: party, handedOver: messages))
        rooms[roomId] = room
        return .joined(clientId: clientId, isInitiator: isInitiator, messages: messages)
    }

    /// Removes the client; returns its socket, which the caller closes. The remaining client
    /// becomes the initiator (it is first in the list now); an empty room is forgotten.
    mutating func leave(_ roomId: String, client clientId: String, as party: CallParty?) -> WebSocketConnection? {
        guard var room = rooms[roomId], let index = room.index(of: clientId),
              room.allows(party, toActAs: clientId) else { return nil }
        let removed = room.clients.remove(at: index)
        if let socket = removed.socket { registrations[ObjectIdentifier(socket)] = nil }
        rooms[roomId] = room.clients.isEmpty ? nil : room
        return removed.socket
    }

    /// A payload from `clientId` for the other client of the room: stored until it joins, queued
    /// until it registers, or delivered at once (docs/protocol.md §2.7).
    mutating func relay(_ message: SignalingMessage, in roomId: String, from clientId: String,
                        as party: CallParty?) -> RelayOutcome {
        guard var room = rooms[roomId] else { return .unknownRoom }
        guard room.index(of: clientId) != nil else { return .unknownClient }
        guard room.allows(party, toActAs: clientId) else { return .forbidden }
        defer { rooms[roomId] = room }
        let otherRegistered = room.clients.first(where: { $0.id != clientId })?.socket != nil
        if !otherRegistered, room.keptMessages >= maxMessagesPerRoom { return .roomFull }
        guard let otherIndex = room.clients.firstIndex(where: { $0.id != clientId }) else {
            room.stored.append(message)
            return .stored
        }
        // A socket already closing (dropped, its close not yet handled) would lose the payload:
        // it waits for the client's next registration instead. The socket can begin closing
        // after any check (the script or a shutdown closes sockets from other threads), so what
        // decides is whether the socket accepted the payload, not whether it looked open before.
        guard let socket = room.clients[otherIndex].socket, Self.deliver(.message(message), on: socket) else {
            // Bounded like the stored payloads: a sender cannot grow the queue of a client whose
            // socket stays closing (a close's unwritten payloads, at most 256, come on top once).
            guard room.keptMessages < maxMessagesPerRoom else { return .roomFull }
            room.clients[otherIndex].pending.append(message)
            return .queued
        }
        return .delivered
    }

    /// Binds a collider socket to a joined client and flushes what was queued for it. Returns the
    /// socket it replaced, if any.
    mutating func register(_ socket: WebSocketConnection, room roomId: String, client clientId: String,
                           as party: CallParty?) -> (replaced: WebSocketConnection?, flushed: Int)? {
        guard var room = rooms[roomId], let index = room.index(of: clientId),
              room.allows(party, toActAs: clientId) else { return nil }
        let previous = room.clients[index].socket
        if let previous { registrations[ObjectIdentifier(previous)] = nil }
        room.clients[index].socket = socket
        room.clients[index].handedOver = []
        // In order; a socket that closes meanwhile keeps the rest queued for the next registration.
        let pending = room.clients[index].pending
        let flushed = pending.prefix { Self.deliver(.message($0), on: socket) }.count
        room.clients[index].pending = Array(pending.dropFirst(flushed))
        rooms[roomId] = room
        registrations[ObjectIdentifier(socket)] = (roomId, clientId, party)
        return (previous === socket ? nil : previous, flushed)
    }

    /// The socket closed or was unregistered: its client stays in the room, unregistered.
    /// - Parameter unsent: payloads the socket accepted but could not write (its peer had begun
    ///   closing): queued first for the client's next registration, as they were sent before
    ///   anything queued since the socket stopped being open.
    mutating func unregister(_ socket: WebSocketConnection, requeueing unsent: [SignalingMessage] = [])
        -> (room: String, client: String, party: CallParty?)? {
        guard let registration = registrations.removeValue(forKey: ObjectIdentifier(socket)) else { return nil }
        if let index = rooms[registration.room]?.index(of: registration.client),
           rooms[registration.room]?.clients[index].socket === socket {
            rooms[registration.room]?.clients[index].socket = nil
            rooms[registration.room]?.clients[index].pending.insert(contentsOf: unsent, at: 0)
        }
        return registration
    }

    func socket(room roomId: String, client clientId: String, as party: CallParty?) -> WebSocketConnection? {
        guard let room = rooms[roomId], let index = room.index(of: clientId),
              room.allows(party, toActAs: clientId) else { return nil }
        return room.clients[index].socket
    }

    /// Forgets the room; returns its registered sockets, which the caller sends `bye` and closes.
    mutating func close(_ roomId: String) -> [WebSocketConnection]? {
        guard let room = rooms.removeValue(forKey: roomId) else { return nil }
        let sockets = room.clients.compactMap(\.socket)
        for socket in sockets { registrations[ObjectIdentifier(socket)] = nil }
        return sockets
    }

    /// Whether `socket` accepted the delivery: false once it stopped being open, when a payload
    /// must wait for the client's next registration instead (an error delivery is moot then).
    @discardableResult
    static func deliver(_ delivery: ColliderDelivery, on socket: WebSocketConnection) -> Bool {
        // A delivery holds only strings and integers, which always encode; were one not to,
        // calling it accepted keeps it from holding up the payloads queued behind it.
        guard let text = try? ECVJSON.encodeString(delivery) else { return true } // cannot fail (see above)
        do { try socket.send(text: text) } catch { return false }
        return true
    }
}
