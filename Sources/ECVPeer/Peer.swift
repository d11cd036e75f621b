import ECV
import ECVProtocol
import Foundation
import GLibCore
import Synchronization

/// A peer on a PeerJS server (SkyWay's `SKWPeer`): connects with an API key, gets its id (OPEN),
/// finds other peers, calls them and takes their calls, opens data connections.
///
/// ```swift
/// let peer = Peer(options: PeerOption(key: "demo", host: "127.0.0.1", port: 8080, path: "/peerjs"))
/// peer.on(.OPEN) { if case .open(let id) = $0 { print("my id", id) } }
/// ```
public final class Peer: Sendable {
    public let options: PeerOption
    let link: PeerServerLink
    let hub = EventHub<PeerEvent>()

    enum Phase: Sendable, Equatable { case connecting, open, disconnected, destroyed }

    struct State {
        var id: String?
        let token: String
        var phase: Phase = .connecting
        var everOpened = false
        /// What the server's OPEN handed out; nil: nothing (a stock PeerJS server).
        var serverICEServers: [ICEServer]?
        var media: [String: MediaConnection] = [:]
        var data: [String: DataConnection] = [:]
        var reader: Task<Void, Never>?
    }
    let state: Mutex<State>

    /// Connects to the server as `id` (nil: the server assigns one). The outcome is an event:
    /// OPEN with the id, or ERROR (`unavailableID`, `invalidKey`, `serverError`, `network`).
    public init(id: String? = nil, options: PeerOption) {
        self.options = options
        link = PeerServerLink(options: options)
        state = Mutex(State(id: id, token: Self.randomToken()))
        InstanceCounter.increment("Peer")
        Task { await self.connectToServer(chosenId: id) }
    }

    deinit { InstanceCounter.decrement("Peer") }

    /// Every event from now on, plus OPEN when it already happened.
    public func events() -> AsyncStream<PeerEvent> { hub.subscribe() }

    /// Sets the callback for `type` (nil removes it), as `[_peer on:SKW_PEER_EVENT_OPEN callback:…]`.
    public func on(_ type: PeerEventType, callback: (@Sendable (PeerEvent) -> Void)?) { hub.on(type, callback) }

    /// The peer id, once known.
    public var id: String? { state.withLock { $0.id } }
    public var isOpen: Bool { state.withLock { $0.phase == .open } }
    public var isDisconnected: Bool { state.withLock { $0.phase == .disconnected } }
    public var isDestroyed: Bool { state.withLock { $0.phase == .destroyed } }
    public var mediaConnections: [MediaConnection] { state.withLock { Array($0.media.values) } }
    public var dataConnections: [DataConnection] { state.withLock { Array($0.data.values) } }

    /// The ids of the peers connected to the server with this key, this one's included (an ERROR
    /// and an empty list when the server refuses: discovery is off unless the key enables it).
    public func listAllPeers() async -> [String] {
        do { return try await link.listPeers() } catch {
            hub.emit(.error(error))
            return []
        }
    }

    // MARK: Connections

    /// Calls `peerId`, sending `stream`. The connection reports STREAM when the callee answered
    /// and its media arrived; ERROR `peerUnavailable` and CLOSE when nobody takes the call.
    public func call(peerId: String, stream: MediaStream, options: CallOption = CallOption()) -> MediaConnection {
        let connection = makeMedia(peer: peerId, connectionId: "mc_" + Self.randomToken(), metadata: options.metadata, outgoing: true)
        if let problem = refusal(peerId: peerId) {
            Task { await connection.end(error: problem) }
            return connection
        }
        let adopted = state.withLock { state -> Bool in
            guard state.phase == .open else { return false }
            state.media[connection.connectionId] = connection
            return true
        }
        guard adopted else {
            Task { await connection.end(error: PeerError(.disconnected, "the peer is not connected to the server")) }
            return connection
        }
        connection.tasks.run { await connection.start(stream: stream) }
        return connection
    }

    /// Opens a data connection with `peerId` (OPEN on the connection once its channel is up).
    public func connect(peerId: String, options: ConnectOption = ConnectOption()) -> DataConnection {
        let id = "dc_" + Self.randomToken()
        let connection = makeData(peer: peerId, connectionId: id, label: options.label ?? id, serialization: options.serialization,
                                  reliable: options.reliable, metadata: options.metadata, outgoing: true)
        if let problem = refusal(peerId: peerId) {
            Task { await connection.end(error: problem) }
            return connection
        }
        let adopted = state.withLock { state -> Bool in
            guard state.phase == .open else { return false }
            state.data[id] = connection
            return true
        }
        guard adopted else {
            Task { await connection.end(error: PeerError(.disconnected, "the peer is not connected to the server")) }
            return connection
        }
        Task { await connection.start() }
        return connection
    }

    private func refusal(peerId: String) -> PeerError? {
        guard PeerJSLimits.isValidId(peerId) else { return PeerError(.invalidID, "\"\(peerId.prefix(80))\" is not a peer id") }
        return nil
    }

    func makeMedia(peer: String, connectionId: String, metadata: PeerJSValue?, outgoing: Bool) -> MediaConnection {
        let link = self.link
        return MediaConnection(peer: peer, connectionId: connectionId, metadata: metadata, outgoing: outgoing,
                               send: { link.send($0) }, ice: { [weak self] in self?.ice ?? PeerICE(servers: []) },
                               onEnded: { [weak self] in self?.ended(media: $0) })
    }

    func makeData(peer: String, connectionId: String, label: String, serialization: PeerJSSerialization, reliable: Bool,
                  metadata: PeerJSValue?, outgoing: Bool) -> DataConnection {
        let link = self.link
        return DataConnection(peer: peer, connectionId: connectionId, label: label, serialization: serialization, reliable: reliable,
                              metadata: metadata, outgoing: outgoing, send: { link.send($0) },
                              ice: { [weak self] in self?.ice ?? PeerICE(servers: []) }, onEnded: { [weak self] in self?.ended(data: $0) })
    }

    /// The configured ICE servers, else the server's, else (a server that hands out none, as
    /// peerjs-server) the defaults a PeerJS client would use.
    var iceServers: [ICEServer] {
        options.iceServers.isEmpty ? state.withLock { $0.serverICEServers } ?? options.defaultICEServers : options.iceServers
    }

    /// The ICE servers and the options' transport policy and silence limit, for a connection about to start.
    var ice: PeerICE { PeerICE(servers: iceServers, policy: options.iceTransportPolicy, dataSilenceLimit: options.dataConnectionSilenceLimit) }

    private func ended(media connection: MediaConnection) {
        let last = state.withLock { state -> Bool in
            guard state.media.removeValue(forKey: connection.connectionId) != nil else { return false }
            return !state.media.values.contains { $0.peer == connection.peer } && !state.data.values.contains { $0.peer == connection.peer }
        }
        if last { hub.emit(.close(connection.peer)) }
    }

    private func ended(data connection: DataConnection) {
        let last = state.withLock { state -> Bool in
            guard state.data.removeValue(forKey: connection.connectionId) != nil else { return false }
            return !state.media.values.contains { $0.peer == connection.peer } && !state.data.values.contains { $0.peer == connection.peer }
        }
        if last { hub.emit(.close(connection.peer)) }
    }

    // MARK: Server connection

    /// Leaves the server, keeping connections with other peers; DISCONNECTED follows.
    public func disconnect() {
        let id = state.withLock { state -> String?? in
            guard state.phase == .open || state.phase == .connecting else { return nil }
            state.phase = .disconnected
            return .some(state.id)
        }
        guard let id else { return }
        link.close(leaving: false)
        hub.emit(.disconnected(id ?? ""))
    }

    /// Connects to the server again with the same id (after `disconnect()` or a lost socket).
    public func reconnect() {
        let id = state.withLock { state -> String? in
            guard state.phase == .disconnected, state.everOpened, let id = state.id else { return nil }
            state.phase = .connecting
            return id
        }
        guard let id else {
            hub.emit(.error(PeerError(.disconnected, "reconnect() needs a peer that was open and is disconnected, not destroyed")))
            return
        }
        Task { await self.connectToServer(chosenId: id) }
    }

    /// Closes every connection and leaves the server for good; the event streams end.
    public func destroy() async {
        let taken = state.withLock { state -> ([MediaConnection], [DataConnection], Bool)? in
            guard state.phase != .destroyed else { return nil }
            let wasConnected = state.phase == .open
            state.phase = .destroyed
            return (Array(state.media.values), Array(state.data.values), wasConnected)
        }
        guard let (media, data, wasConnected) = taken else { return }
        for connection in media { await connection.end(error: nil) }
        for connection in data { await connection.end(error: nil) }
        link.close(leaving: true)
        state.withLock { $0.reader?.cancel() }
        if wasConnected { hub.emit(.disconnected(id ?? "")) }
        hub.finish()
    }

    static func randomToken() -> String {
        let alphabet = Array("abcdefghijklmnopqrstuvwxyz0123456789")
        return String((0..<12).map { _ in alphabet.randomElement()! })
    }
}
