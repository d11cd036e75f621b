import ECVProtocol
import Foundation
import GLibCore

/// What the peer server does after a step: frames to send and sockets to close, in order.
enum PeerServerAction<Socket: AnyObject & Sendable>: Sendable {
    case send(Socket, PeerJSMessage)
    /// A relayed message, encoded once when it came (held messages wait as their text).
    case sendText(Socket, String)
    case close(Socket, code: UInt16, reason: String)
    case log(String)
}

/// Why an HTTP request of the peer server is refused.
struct PeerServerRefusal: Error, Sendable, Equatable {
    var status: Int
    var message: String
}

/// The peer server's one state (docs/protocol.md §8): API keys, registered peers, held messages.
/// Pure: no I/O, no clock of its own (`now` comes with every step), no locks; every step returns
/// what to send and close, which the engine delivers outside its lock.
struct PeerServerState<Socket: AnyObject & Sendable> {
    struct PeerRef: Hashable, Sendable {
        var key: String
        var id: String
    }

    struct Client {
        var token: String
        /// nil while the peer is away (its socket closed, the grace running).
        var socket: Socket?
        var lastSeen: Double
        var goneSince: Double?
        /// Peers it exchanged messages with, oldest first (bounded): who hears its `LEAVE`.
        var contacts: [String] = []
    }

    /// A message waiting for its destination: who sent it and the frame it goes out as.
    struct HeldMessage {
        var src: String
        var text: String
    }

    struct Held {
        var messages: [HeldMessage] = []
        /// The frames that brought them, in bytes.
        var bytes = 0
        var since: Double
    }

    typealias Action = PeerServerAction<Socket>

    let configuration: PeerServerConfiguration
    private(set) var keys: [String: PeerAPIKey]
    private(set) var clients: [PeerRef: Client] = [:]
    private(set) var held: [PeerRef: Held] = [:]
    /// Messages in `held` and their bytes, all peers together.
    private var heldCount = 0
    private(set) var heldBytes = 0
    private var sockets: [ObjectIdentifier: PeerRef] = [:]
    private let expire: Double, alive: Double, grace: Double
    private let openPayload: PeerJSValue

    init(configuration: PeerServerConfiguration, iceServers: [ICEServer]) {
        self.configuration = configuration
        keys = Dictionary(configuration.keys.map { ($0.key, $0) }, uniquingKeysWith: { first, _ in first })
        expire = configuration.expireTimeout.seconds
        alive = configuration.aliveTimeout.seconds
        grace = configuration.leaveGrace.seconds
        openPayload = .object(["iceServers": .array(iceServers.map(\.peerJSValue))])
    }

    // MARK: HTTP

    /// `GET <path>/<key>/id`: a fresh id nobody holds.
    func issueId(key: String, origin: String?) -> Result<String, PeerServerRefusal> {
        if let refusal = refusal(key: key, origin: origin) { return .failure(refusal) }
        while true {
            let id = UUID().uuidString.lowercased()
            if clients[PeerRef(key: key, id: id)] == nil { return .success(id) }
        }
    }

    /// `GET <path>/<key>/peers`: the ids connected now, when the key allows discovery.
    func peers(key: String, origin: String?) -> Result<[String], PeerServerRefusal> {
        if let refusal = refusal(key: key, origin: origin) { return .failure(refusal) }
        guard keys[key]?.allowDiscovery == true else {
            return .failure(PeerServerRefusal(status: 401, message: "peer discovery is off for this key"))
        }
        return .success(clients.filter { $0.key.key == key && $0.value.socket != nil }.map(\.key.id).sorted())
    }

    private func refusal(key: String, origin: String?) -> PeerServerRefusal? {
        guard let entry = keys[key] else { return PeerServerRefusal(status: 401, message: "Invalid key provided") }
        guard entry.admits(origin: origin) else {
            return PeerServerRefusal(status: 403, message: "origin \(origin.map { String($0.prefix(100)) } ?? "(none)") may not use this key")
        }
        return nil
    }

    // MARK: Sockets

    /// A socket opened on `<path>/peerjs?key=&id=&token=`.
    mutating func connect(_ socket: Socket, key: String?, id: String?, token: String?, origin: String?, now: Double) -> [Action] {
        func refuse(_ type: PeerJSMessageType, _ text: String) -> [Action] {
            [.log("peer socket refused: \(text)"), .send(socket, .notice(type, text)), .close(socket, code: 1008, reason: type.rawValue)]
        }
        guard let key, let id, let token, !key.isEmpty, !id.isEmpty, !token.isEmpty else {
            return refuse(.error, "No id, token, or key supplied to websocket server")
        }
        guard PeerJSLimits.isValidId(id) else { return refuse(.error, "Invalid id provided") }
        guard PeerJSLimits.isValidToken(token) else { return refuse(.error, "Invalid token provided") }
        guard let entry = keys[key] else { return refuse(.invalidKey, "Invalid key provided") }
        guard entry.admits(origin: origin) else {
            return refuse(.error, "Origin \(origin.map { String($0.prefix(100)) } ?? "(none)") is not allowed for this key")
        }
        let ref = PeerRef(key: key, id: id)
        var actions: [Action] = []
        if var client = clients[ref] {
            guard client.token == token else { return refuse(.idTaken, "ID is taken") }
            if let previous = client.socket {
                sockets[ObjectIdentifier(previous)] = nil
                actions.append(.close(previous, code: 1000, reason: "replaced by a newer socket"))
            }
            client.socket = socket
            client.goneSince = nil
            client.lastSeen = now
            clients[ref] = client
            actions.append(.log("peer \(id) reconnected (key \(key))"))
        } else {
            let count = clients.keys.reduce(0) { $0 + ($1.key == key ? 1 : 0) }
            guard count < entry.concurrentLimit else { return refuse(.error, "Server has reached its concurrent user limit") }
            clients[ref] = Client(token: token, socket: socket, lastSeen: now)
            actions.append(.log("peer \(id) opened (key \(key))"))
        }
        sockets[ObjectIdentifier(socket)] = ref
        actions.append(.send(socket, PeerJSMessage(type: .open, payload: openPayload)))
        if let waiting = held.removeValue(forKey: ref) {
            heldCount -= waiting.messages.count
            heldBytes -= waiting.bytes
            for message in waiting.messages {
                note(contact: message.src, of: ref)
                actions.append(.sendText(socket, message.text))
            }
        }
        return actions
    }

    /// A text frame from a socket, handled as peerjs-server 1.0.2 handles it (docs/protocol.md
    /// §8.3): no frame closes the socket; what it ignores is ignored (and logged), what our bounds
    /// keep from delivery is answered with `EXPIRE`.
    mutating func receive(_ text: String, from socket: Socket, now: Double) -> [Action] {
        guard let ref = sockets[ObjectIdentifier(socket)] else { return [] }
        clients[ref]?.lastSeen = now
        switch PeerJSClientFrame(text: text) {
        case .heartbeat:
            return []
        case .ignored(let reason):
            return [.log("peer \(ref.id) sent a frame the server ignores: \(reason)")]
        case .leaveServer:
            return remove(ref, reason: "left", tellContacts: true) + [.close(socket, code: 1000, reason: "left")]
        case .undeliverable(let type, let dst, let reason):
            var actions: [Action] = [.log("peer \(ref.id)'s \(type.rawValue) for \(dst) is not relayed: \(reason)")]
            if type != .leave, type != .expire { actions.append(.send(socket, PeerJSMessage(type: .expire, src: dst, dst: ref.id))) }
            return actions
        case .relay(var message):
            message.src = ref.id
            return relay(message, bytes: text.utf8.count, in: ref.key, now: now)
        }
    }

    /// - Parameter bytes: the size of the frame that brought it, what holding it costs.
    private mutating func relay(_ message: PeerJSMessage, bytes: Int, in key: String, now: Double) -> [Action] {
        guard let dst = message.dst, let src = message.src else { return [] }
        let target = PeerRef(key: key, id: dst), sender = PeerRef(key: key, id: src)
        let text: String
        do { text = try message.jsonString() } catch { return [.log("\(src)'s \(message.type.rawValue) does not encode: \(error)")] }
        note(contact: dst, of: sender)
        if let socket = clients[target]?.socket {
            note(contact: src, of: target)
            return [.sendText(socket, text)]
        }
        // Not connected (or away): LEAVE and EXPIRE concern nobody; the rest waits a while.
        guard message.type != .leave, message.type != .expire else { return [] }
        var waiting = held[target] ?? Held(since: now)
        guard waiting.messages.count < configuration.maxHeldMessagesPerPeer, heldCount < configuration.maxHeldMessages,
              waiting.bytes + bytes <= configuration.maxHeldBytesPerPeer, heldBytes + bytes <= configuration.maxHeldBytes else {
            guard let senderSocket = clients[sender]?.socket else { return [] }
            return [.log("peer \(dst) has \(waiting.messages.count) messages (\(waiting.bytes) bytes) waiting: \(src)'s \(message.type.rawValue) expires"),
                    .send(senderSocket, PeerJSMessage(type: .expire, src: dst, dst: src))]
        }
        waiting.messages.append(HeldMessage(src: src, text: text))
        waiting.bytes += bytes
        held[target] = waiting
        heldCount += 1
        heldBytes += bytes
        return []
    }

    /// The socket closed. Closed cleanly (a close frame: the client disconnected on purpose, its
    /// connections with other peers go on), the peer is forgotten at once, as PeerJS does. Dropped
    /// (1006: no close frame, the process or its network vanished), it keeps its id for
    /// `leaveGrace`, then leaves: the peers it talked to hear `LEAVE`.
    mutating func socketClosed(_ socket: Socket, code: UInt16, now: Double) -> [Action] {
        guard let ref = sockets.removeValue(forKey: ObjectIdentifier(socket)), var client = clients[ref],
              client.socket === socket else { return [] }
        if code != 1006 {
            clients[ref] = nil
            return [.log("peer \(ref.id) disconnected (\(code)); its connections with other peers are theirs")]
        }
        client.socket = nil
        client.goneSince = now
        clients[ref] = client
        if grace <= 0 { return remove(ref, reason: "its socket closed", tellContacts: configuration.announcesDroppedPeers) }
        return [.log("peer \(ref.id)'s socket closed; its id is kept \(grace) s for a reconnect")]
    }

    // MARK: Time

    /// Drops silent peers, ends graces, expires held messages.
    mutating func tick(now: Double) -> [Action] {
        var actions: [Action] = []
        for (ref, client) in clients {
            if let socket = client.socket, now - client.lastSeen >= alive {
                sockets[ObjectIdentifier(socket)] = nil
                actions.append(.close(socket, code: 1000, reason: "no heartbeat"))
                actions += remove(ref, reason: "sent nothing for \(alive) s", tellContacts: configuration.announcesDroppedPeers)
            } else if let gone = client.goneSince, now - gone >= grace {
                actions += remove(ref, reason: "did not come back within \(grace) s", tellContacts: configuration.announcesDroppedPeers)
            }
        }
        for (ref, waiting) in held where now - waiting.since >= expire {
            held[ref] = nil
            heldCount -= waiting.messages.count
            heldBytes -= waiting.bytes
            var told: Set<String> = []
            for message in waiting.messages {
                let src = message.src
                guard told.insert(src).inserted, let socket = clients[PeerRef(key: ref.key, id: src)]?.socket else { continue }
                actions.append(.send(socket, PeerJSMessage(type: .expire, src: ref.id, dst: src)))
            }
            actions.append(.log("messages for \(ref.id) expired (\(waiting.messages.count))"))
        }
        return actions
    }

    var isIdle: Bool { clients.isEmpty && held.isEmpty }

    /// Every socket of a registered peer (for shutting down).
    var openSockets: [Socket] { clients.values.compactMap(\.socket) }

    // MARK: Helpers

    /// Forgets the peer; with `tellContacts`, everyone it talked to hears `LEAVE` (PeerJS
    /// clients then close every connection with it, so only for a peer that is gone for good).
    private mutating func remove(_ ref: PeerRef, reason: String, tellContacts: Bool) -> [Action] {
        guard let client = clients.removeValue(forKey: ref) else { return [] }
        if let socket = client.socket { sockets[ObjectIdentifier(socket)] = nil }
        var actions: [Action] = [.log("peer \(ref.id) removed: \(reason)")]
        for contact in client.contacts {
            let other = PeerRef(key: ref.key, id: contact)
            clients[other]?.contacts.removeAll { $0 == ref.id }
            guard tellContacts, let socket = clients[other]?.socket else { continue }
            actions.append(.send(socket, PeerJSMessage(type: .leave, src: ref.id, dst: contact)))
        }
        return actions
    }

    private mutating func note(contact: String?, of ref: PeerRef) {
        guard let contact, contact != ref.id, var client = clients[ref], !client.contacts.contains(contact) else { return }
        client.contacts.append(contact)
        if client.contacts.count > configuration.maxContactsPerPeer { client.contacts.removeFirst() }
        clients[ref] = client
    }
}

extension ICEServer {
    /// `{"urls":[…],"username":…,"credential":…}`, as RTCPeerConnection takes it.
    var peerJSValue: PeerJSValue {
        .fields([("urls", .array(urls.map(PeerJSValue.string))), ("username", username.map(PeerJSValue.string)),
                 ("credential", credential.map(PeerJSValue.string))])
    }
}
