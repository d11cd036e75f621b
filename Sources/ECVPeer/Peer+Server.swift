import ECV
import ECVProtocol
import Foundation

extension Peer {
    /// Gets an id when none was chosen, opens the socket, and reads it until it closes.
    func connectToServer(chosenId: String?) async {
        let id: String
        do throws(PeerError) {
            if let problem = options.problem() { throw PeerError(.invalidArgument, problem) }
            if let chosenId {
                guard PeerJSLimits.isValidId(chosenId) else { throw PeerError(.invalidID, "\"\(chosenId.prefix(80))\" is not a PeerJS id") }
                id = chosenId
            } else {
                id = try await link.fetchId()
            }
        } catch {
            abort(error)
            return
        }
        let token = state.withLock { state -> String? in
            guard state.phase == .connecting else { return nil }
            state.id = id
            return state.token
        }
        guard let token else { return }
        let messages: AsyncStream<PeerServerLinkEvent>
        do { messages = try await link.open(id: id, token: token) } catch {
            abort(error)
            return
        }
        let reader = Task { [weak self] in
            for await event in messages {
                guard let self else { return }
                switch event {
                case .message(let message): await self.handle(message)
                case .invalid(let reason): self.log(2, "the server sent a frame that is not a PeerJS message: \(reason)")
                case .closed: self.lostServer()
                }
            }
        }
        let destroyed = state.withLock { state -> Bool in
            state.reader?.cancel()
            state.reader = reader
            return state.phase == .destroyed
        }
        if destroyed { reader.cancel(); link.close(leaving: true) }
    }

    /// The server refused us or cannot be reached: before the first OPEN the peer is destroyed
    /// (as PeerJS aborts), after it only disconnected.
    func abort(_ error: PeerError) {
        let (wasOpen, everOpened, id) = state.withLock { state -> (Bool, Bool, String?) in
            let wasOpen = state.phase == .open || state.phase == .connecting
            if state.phase != .destroyed { state.phase = state.everOpened ? .disconnected : .destroyed }
            return (wasOpen, state.everOpened, state.id)
        }
        log(1, error.description)
        // The error that ends a peer which never opened lasts: an app that subscribes or sets its
        // ERROR callback after creating the peer (as the tutorial does) still hears why.
        hub.emit(.error(error), lasting: !everOpened)
        link.close(leaving: false)
        if everOpened {
            if wasOpen { hub.emit(.disconnected(id ?? "")) }
        } else {
            hub.finish()
        }
    }

    private func lostServer() {
        let id = state.withLock { state -> String?? in
            guard state.phase == .open || state.phase == .connecting else { return nil }
            state.phase = state.everOpened ? .disconnected : .destroyed
            return .some(state.id)
        }
        guard let id else { return }
        if isDestroyed {
            hub.emit(.error(PeerError(.socketClosed, "the server closed the socket before OPEN")))
            hub.finish()
        } else {
            hub.emit(.disconnected(id ?? ""))
        }
    }

    func handle(_ message: PeerJSMessage) async {
        switch message.type {
        case .open:
            let id = state.withLock { state -> String? in
                guard state.phase == .connecting else { return nil }
                state.phase = .open
                state.everOpened = true
                if case .array(let servers)? = message.payload?["iceServers"] { state.serverICEServers = servers.compactMap(ICEServer.init(peerJS:)) }
                return state.id
            }
            if let id { log(3, "open as \(id)"); hub.emit(.open(id)) }
        case .error:
            abort(PeerError(.serverError, message.noticeText ?? "the server reported an error"))
        case .idTaken:
            abort(PeerError(.unavailableID, "ID \"\(id ?? "")\" is taken"))
        case .invalidKey:
            abort(PeerError(.invalidKey, "API KEY \"\(options.key)\" is invalid"))
        case .leave:
            guard let src = message.src else { return }
            log(3, "\(src) left")
            for connection in connections(with: src) {
                await connection.end(nil)
            }
        case .expire:
            guard let src = message.src else { return }
            let error = PeerError(.peerUnavailable, "Could not connect to peer \(src)")
            hub.emit(.error(error))
            for connection in connections(with: src) where !connection.isOpen { await connection.end(error) }
        case .offer:
            await handleOffer(message)
        case .answer, .candidate:
            guard let src = message.src, let id = message.payload?["connectionId"]?.stringValue else { return }
            let (media, data) = state.withLock { ($0.media[id], $0.data[id]) }
            if let media, media.peer == src { await media.receive(message) } else if let data, data.peer == src { await data.receive(message) } else {
                log(2, "\(message.type.rawValue) from \(src) for an unknown connection \(id.prefix(64))")
            }
        case .heartbeat:
            break
        }
    }

    private func handleOffer(_ message: PeerJSMessage) async {
        guard let src = message.src else { return }
        let offer: PeerJSDescriptionPayload
        do { offer = try PeerJSDescriptionPayload(message.payload) } catch {
            log(1, "a bad OFFER from \(src): \(error)")
            hub.emit(.error(PeerError(.negotiationFailed, "\(src) sent a bad OFFER: \(error)")))
            return
        }
        let (media, data) = state.withLock { ($0.media[offer.connectionId], $0.data[offer.connectionId]) }
        // A new offer on a connection we hold: the caller rebuilt its side (ICE cannot restart).
        if let media, media.peer == src { await media.receive(message); return }
        if let data, data.peer == src { await data.receive(message); return }
        switch offer.connectionType {
        case .media:
            let connection = makeMedia(peer: src, connectionId: offer.connectionId, metadata: offer.metadata, outgoing: false)
            guard state.withLock({ state in if state.phase != .destroyed { state.media[offer.connectionId] = connection }; return state.phase != .destroyed }) else { return }
            await connection.receive(message)
            hub.emit(.call(connection))
        case .data:
            let connection = makeData(peer: src, connectionId: offer.connectionId, label: offer.label ?? offer.connectionId,
                                      serialization: offer.serialization ?? .binary, reliable: offer.reliable ?? true,
                                      metadata: offer.metadata, outgoing: false)
            guard state.withLock({ state in if state.phase != .destroyed { state.data[offer.connectionId] = connection }; return state.phase != .destroyed }) else { return }
            await connection.receive(message)
            hub.emit(.connection(connection))
            await connection.start()
        }
    }

    /// Both kinds of connection with `peer`, as one closable list.
    private func connections(with peer: String) -> [AnyConnection] {
        state.withLock { state in
            state.media.values.filter { $0.peer == peer }.map(AnyConnection.media) + state.data.values.filter { $0.peer == peer }.map(AnyConnection.data)
        }
    }

    func log(_ level: Int, _ text: String) {
        guard options.debug >= level else { return }
        let line = "[peer \(id ?? "?")] \(text)"
        switch level {
        case 1: Logger.error(line)
        case 2: Logger.warn(line)
        default: Logger.info(line)
        }
    }
}

private enum AnyConnection {
    case media(MediaConnection)
    case data(DataConnection)

    var isOpen: Bool {
        switch self {
        case .media(let connection): connection.isOpen
        case .data(let connection): connection.isOpen
        }
    }

    func end(_ error: PeerError?) async {
        switch self {
        case .media(let connection): await connection.end(error: error)
        case .data(let connection): await connection.end(error: error)
        }
    }
}

extension ICEServer {
    /// An entry of the server's `OPEN` payload.
    init?(peerJS value: PeerJSValue) {
        let urls: [String]
        switch value["urls"] {
        case .string(let url)?: urls = [url]
        case .array(let list)?: urls = list.compactMap(\.stringValue)
        default: return nil
        }
        guard !urls.isEmpty else { return nil }
        self.init(urls: urls, username: value["username"]?.stringValue, credential: value["credential"]?.stringValue)
    }
}
