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

    /// What the room's kept payloads cost: stored, queued, and handed over in a join answer
    /// (kept until the joiner registers), each as `SignalingMessage.keptBytes`.
    var keptBytes: Int {
        stored.reduce(0) { $0 + $1.keptBytes }
            + clients.reduce(0) { total, client in
                total + client.pending.reduce(0) { $0 + $1.keptBytes } + client.handedOver.reduce(0) { $0 + $1.keptBytes }
            }
    }

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
        /// The room keeps `maxMessagesPerRoom` payloads or `maxMessageBytesPerRoom` bytes already
        /// (or all rooms together `maxMessageBytes`).
        case roomFull
    }

    private(set) var rooms: [String: Room] = [:]
    /// `ServiceLimits.maxMessagesPerRoom` and `maxLiveCalls` (the most rooms there may be).
    var maxMessagesPerRoom = Int.max
    var maxRooms = Int.max
    /// `ServiceLimits.maxMessageBytesPerRoom` and `maxRoomMessageBytes` (all rooms together).
    var maxMessageBytesPerRoom = Int.max
    var maxMessageBytes = Int.max
    /// `Room.keptBytes` of every room, kept in step by `withRoom`.
    private(set) var keptBytes = 0
    /// Collider socket → the (room, client) it registered as.
    var registrations: [ObjectIdentifier: (room: String, client: String, party: CallParty?)] = [:]

    /// Adds a client for `party` (nil: any party, first come). A party's slot is taken once.
    mutating func join(_ roomId: String, as party: CallParty?) -> JoinOutcome {
        guard ECVAPI.isValidRtcId(roomId) else { return .invalidRoom }
        if rooms[roomId] == nil, rooms.count >= maxRooms { return .full }
        return withRoom(roomId) { slot in
            var room = slot ?? Room()
            defer { if !room.clients.isEmpty { slot = room } }
            return Self.join(&room, as: party)
        }
    }

    private static func join(_ room: inout Room, as party: CallParty?) -> JoinOutcome {
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
        return .joined(clientId: clientId, isInitiator: isInitiator, messages: messages)
    }

    /// Removes the client; returns its socket, which the caller closes. The remaining client
    /// becomes the initiator (it is first in the list now); an empty room is forgotten.
    mutating func leave(_ roomId: String, client clientId: String, as party: CallParty?) -> WebSocketConnection? {
        guard let room = rooms[roomId], let index = room.index(of: clientId),
              room.allows(party, toActAs: clientId) else { return nil }
        let removed = withRoom(roomId) { room in
            let removed = room?.clients.remove(at: index)
            if room?.clients.isEmpty == true { room = nil }
            return removed
        }
        if let socket = removed?.socket { registrations[ObjectIdentifier(socket)] = nil }
        return removed?.socket
    }

    /// A payload from `clientId` for the other client of the room: stored until it joins, queued
    /// until it registers, or delivered at once (docs/protocol.md §2.7).
    mutating func relay(_ message: SignalingMessage, in roomId: String, from clientId: String,
                        as party: CallParty?) -> RelayOutcome {
        guard let room = rooms[roomId] else { return .unknownRoom }
        guard room.index(of: clientId) != nil else { return .unknownClient }
        guard room.allows(party, toActAs: clientId) else { return .forbidden }
        let (countLimit, byteLimit, allRoomsLimit) = (maxMessagesPerRoom, maxMessageBytesPerRoom, maxMessageBytes)
        let keptElsewhere = keptBytes - room.keptBytes
        /// Whether one more payload may be kept: by count and bytes in this room, and by bytes in all rooms.
        func fits(_ room: Room) -> Bool {
            let bytes = room.keptBytes + message.keptBytes
            return room.keptMessages < countLimit && bytes <= byteLimit && keptElsewhere + bytes <= allRoomsLimit
        }
        return withRoom(roomId) { slot in
            guard var room = slot else { return .unknownRoom }
            defer { slot = room }
            let otherRegistered = room.clients.first(where: { $0.id != clientId })?.socket != nil
            if !otherRegistered, !fits(room) { return .roomFull }
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
                // socket stays closing (a close's unwritten payloads, bounded in count and bytes by
                // the socket, come on top once).
                guard fits(room) else { return .roomFull }
                room.clients[otherIndex].pending.append(message)
                return .queued
            }
            return .delivered
        }
    }

    /// Binds a collider socket to a joined client and flushes what was queued for it. Returns the
    /// socket it replaced, if any.
    mutating func register(_ socket: WebSocketConnection, room roomId: String, client clientId: String,
                           as party: CallParty?) -> (replaced: WebSocketConnection?, flushed: Int)? {
        guard let room = rooms[roomId], let index = room.index(of: clientId),
              room.allows(party, toActAs: clientId) else { return nil }
        let previous = room.clients[index].socket
        if let previous { registrations[ObjectIdentifier(previous)] = nil }
        let flushed = withRoom(roomId) { slot -> Int in
            guard var room = slot else { return 0 }
            defer { slot = room }
            room.clients[index].socket = socket
            room.clients[index].handedOver = []
            // In order; a socket that closes meanwhile keeps the rest queued for the next registration.
            let pending = room.clients[index].pending
            let flushed = pending.prefix { Self.deliver(.message($0), on: socket) }.count
            room.clients[index].pending = Array(pending.dropFirst(flushed))
            return flushed
        }
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
        withRoom(registration.room) { room in
            guard let index = room?.index(of: registration.client), room?.clients[index].socket === socket else { return }
            room?.clients[index].socket = nil
            room?.clients[index].pending.insert(contentsOf: unsent, at: 0)
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
        guard let room = withRoom(roomId, { slot in defer { slot = nil }; return slot }) else { return nil }
        let sockets = room.clients.compactMap(\.socket)
        for socket in sockets { registrations[ObjectIdentifier(socket)] = nil }
        return sockets
    }

    /// Runs `change` on the room (nil: there is none, or set to nil to forget it) and keeps
    /// `keptBytes` in step with what the room keeps after it. Every change of a room goes through here.
    private mutating func withRoom<T>(_ roomId: String, _ change: (inout Room?) -> T) -> T {
        var room = rooms[roomId]
        let before = room?.keptBytes ?? 0
        let result = change(&room)
        rooms[roomId] = room
        keptBytes += (room?.keptBytes ?? 0) - before
        return result
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

extension SignalingMessage {
    /// What keeping the payload costs, near enough: its text in bytes plus a fixed 64 for the
    /// rest (the count limits cover the per-payload overhead).
    var keptBytes: Int {
        switch self {
        case .offer(let sdp), .answer(let sdp): sdp.utf8.count + 64
        case .candidate(let candidate): candidate.candidate.utf8.count + candidate.sdpMid.utf8.count + 64
        case .bye: 64
        }
    }
}
