import ECV
import ECVProtocol
import Foundation
import GLibCore
import MediaPipeline
import Synchronization
import WebRTC

/// A message on a data connection.
public enum DataMessage: Sendable, Equatable {
    case text(String)
    case binary([UInt8])
}

/// What a data connection reports (PeerJS's `DataConnection` events).
public enum DataConnectionEvent: Sendable, Equatable {
    case open
    case data(DataMessage)
    case close
    case error(PeerError)
}

public enum DataConnectionEventType: String, Sendable, Hashable {
    case OPEN, DATA, CLOSE, ERROR
}

extension DataConnectionEvent: KindedEvent {
    public var kind: DataConnectionEventType {
        switch self {
        case .open: .OPEN
        case .data: .DATA
        case .close: .CLOSE
        case .error: .ERROR
        }
    }

    var isLasting: Bool { self == .open || self == .close }
}

/// A PeerJS data connection with another peer: text and bytes both ways over one data channel of
/// its own WebRTC connection, encoded as `serialization` says (PeerJS's default BinaryPack,
/// `json`, or `raw`).
public final class DataConnection: Sendable {
    public let peer: String
    public let connectionId: String
    public let label: String
    public let serialization: PeerJSSerialization
    public let reliable: Bool
    public let metadata: PeerJSValue?
    let outgoing: Bool
    let signaling: ConnectionSignaling
    private let ice: @Sendable () -> PeerICE
    private let onEnded: @Sendable (DataConnection) -> Void
    let hub = EventHub<DataConnectionEvent>()
    /// PeerJS splits larger messages into chunks (which we do not read or write).
    public static let maxMessageBytes = 16_300

    private struct State {
        var inbox = SignalInbox()
        var channel: DataChannelHandle?
        var started = false
        var open = false
        var closed = false
        var tasks: [Task<Void, Never>] = []
    }
    private let state = Mutex(State())

    init(peer: String, connectionId: String, label: String, serialization: PeerJSSerialization, reliable: Bool, metadata: PeerJSValue?,
         outgoing: Bool, send: @escaping @Sendable (PeerJSMessage) -> Bool, ice: @escaping @Sendable () -> PeerICE,
         onEnded: @escaping @Sendable (DataConnection) -> Void) {
        self.peer = peer
        self.connectionId = connectionId
        self.label = label
        self.serialization = serialization
        self.reliable = reliable
        self.metadata = metadata
        self.outgoing = outgoing
        self.ice = ice
        self.onEnded = onEnded
        signaling = ConnectionSignaling(remotePeer: peer, connectionId: connectionId, type: .data, send: send) { payload in
            payload.label = label
            payload.reliable = reliable
            payload.serialization = serialization
            payload.metadata = metadata
        }
        InstanceCounter.increment("DataConnection")
    }

    deinit { InstanceCounter.decrement("DataConnection") }

    public func events() -> AsyncStream<DataConnectionEvent> { hub.subscribe() }
    public func on(_ type: DataConnectionEventType, callback: (@Sendable (DataConnectionEvent) -> Void)?) { hub.on(type, callback) }

    public var isOpen: Bool { state.withLock { $0.open && !$0.closed } }

    // MARK: Sending

    public func send(_ text: String) throws(PeerError) { try send(.text(text)) }
    public func send(data: [UInt8]) throws(PeerError) { try send(.binary(data)) }

    public func send(_ message: DataMessage) throws(PeerError) {
        guard let channel = state.withLock({ $0.open && !$0.closed ? $0.channel : nil }) else {
            throw PeerError(.notOpenYet, "the data connection with \(peer) is not open")
        }
        let wire: DataChannelHandle.Message
        switch (serialization, message) {
        case (.binary, .text(let text)), (.binaryUTF8, .text(let text)): wire = .binary(BinaryPack.pack(.text(text)))
        case (.binary, .binary(let bytes)), (.binaryUTF8, .binary(let bytes)): wire = .binary(BinaryPack.pack(.bytes(bytes)))
        case (.json, .text(let text)):
            // A JSON string, as JSON.stringify writes it, in UTF-8 bytes (PeerJS's JSON channel).
            guard let encoded = try? ECVJSON.encode([text]) else { throw PeerError(.invalidArgument, "the text does not encode as JSON") } // only an invalid string fails
            wire = .binary(Array(encoded.dropFirst().dropLast()))
        case (.json, .binary):
            throw PeerError(.invalidArgument, "a json data connection carries JSON, not bytes; use binary or raw serialization")
        case (.raw, .text(let text)), (.none, .text(let text)): wire = .text(text)
        case (.raw, .binary(let bytes)), (.none, .binary(let bytes)): wire = .binary(bytes)
        }
        let size = switch wire { case .text(let text): text.utf8.count; case .binary(let bytes): bytes.count }
        guard size < Self.maxMessageBytes else {
            throw PeerError(.messageTooBig, "\(size) bytes; a PeerJS data message is less than \(Self.maxMessageBytes) bytes")
        }
        do { try channel.send(wire) } catch { throw PeerError(.notOpenYet, "\(error)") }
    }

    /// Ends the connection on both sides. Idempotent; CLOSE follows.
    public func close() { Task { await self.end(error: nil) } }

    public func closeAndWait() async { await end(error: nil) }

    // MARK: Set-up

    func start() async {
        guard state.withLock({ state in defer { state.started = true }; return !state.started && !state.closed }) else { return }
        var media = MediaConfiguration(sendsMedia: false)
        media.receivesMedia = false
        let signaling = self.signaling
        let ice = self.ice()
        if let refusal = ice.refusal { await end(error: refusal); return }
        var configuration = peerConfiguration(ice: ice, media: media)
        // An idle data connection carries no bytes: silence says nothing about the far end here
        // (its closing is told in-band, by the channel, or by the server's LEAVE).
        configuration.disconnectedAfter = .seconds(86_400)
        configuration.failedAfter = .seconds(86_400)
        let pc = PeerConnection(configuration: configuration, role: outgoing ? .offerer : .answerer) { message in signaling.relay(message) }
        let events = pc.events()
        guard state.withLock({ state in if !state.closed { state.inbox.peerConnection = pc }; return !state.closed }) else { await pc.close(); return }
        keep(Task { [weak self] in
            for await event in events {
                guard let self else { return }
                switch event {
                case .remoteDataChannel(let handle) where !self.outgoing: self.bind(handle)
                case .stateChanged(.failed): await self.end(error: PeerError(.webrtc, "the connection to \(self.peer) failed"))
                default: break
                }
            }
        })
        let config = DataChannelConfig(enabled: true, label: label, ordered: reliable)
        do { try await pc.start(dataChannels: outgoing ? [config] : []) } catch {
            await end(error: PeerError(.webrtc, "the data connection did not start: \(error)"))
            return
        }
        // The callee knows the label from the offer: its handle exists (and is listened to) before
        // the channel opens, so nothing sent right after the open is missed.
        bind(await pc.openDataChannel(config))
        let waiting = state.withLock { state in defer { state.inbox.waiting = [] }; return state.inbox.waiting }
        for message in waiting { await pc.receive(message) }
    }

    private func bind(_ handle: DataChannelHandle) {
        let bound = state.withLock { state -> Bool in
            guard state.channel == nil, !state.closed else { return false }
            state.channel = handle
            return true
        }
        guard bound else { return }
        let events = handle.events()
        if handle.isOpen { opened() }
        keep(Task { [weak self] in
            for await event in events {
                guard let self else { return }
                switch event {
                case .open: self.opened()
                case .closed: await self.end(error: nil); return
                case .error(let message): self.hub.emit(.error(PeerError(.webrtc, message)))
                case .text(let text): self.deliver(.text(text))
                case .binary(let bytes): self.deliver(.binary(bytes))
                }
            }
        })
    }

    private func opened() {
        guard state.withLock({ state in defer { state.open = true }; return !state.open && !state.closed }) else { return }
        hub.emit(.open)
    }

    /// PeerJS's in-band close (`{"__peerData":{"type":"close"}}`, what `close({flush: true})`
    /// sends) in this connection's serialization; raw connections have none.
    private var closeNotice: DataChannelHandle.Message? {
        switch serialization {
        case .binary, .binaryUTF8: .binary(Self.packedCloseNotice)
        case .json: .binary(Array(#"{"__peerData":{"type":"close"}}"#.utf8))
        case .raw, .none: nil
        }
    }

    /// BinaryPack of `{"__peerData":{"type":"close"}}`: fixmap(1), "__peerData", fixmap(1), "type", "close".
    static let packedCloseNotice: [UInt8] = [0x81, 0xba] + Array("__peerData".utf8) + [0x81, 0xb4] + Array("type".utf8) + [0xb5] + Array("close".utf8)

    private func isCloseNotice(_ wire: DataMessage) -> Bool {
        let bytes: [UInt8] = switch wire { case .text(let text): Array(text.utf8); case .binary(let bytes): bytes }
        switch serialization {
        case .binary, .binaryUTF8: return bytes == Self.packedCloseNotice
        case .json:
            guard bytes.count < 200 else { return false }
            // Not that object: an ordinary message.
            return (try? JSONDecoder().decode([String: [String: String]].self, from: Data(bytes)))?["__peerData"]?["type"] == "close"
        case .raw, .none: return false
        }
    }

    /// A message as the channel carried it, decoded as the serialization says.
    private func deliver(_ wire: DataMessage) {
        if isCloseNotice(wire) {
            Task { await self.end(error: nil) }
            return
        }
        switch (serialization, wire) {
        case (.binary, .binary(let bytes)), (.binaryUTF8, .binary(let bytes)):
            do {
                switch try BinaryPack.unpack(bytes) {
                case .text(let text): hub.emit(.data(.text(text)))
                case .bytes(let data): hub.emit(.data(.binary(data)))
                }
            } catch {
                hub.emit(.error(PeerError(.invalidArgument, "\(peer) sent a message this side cannot read: \(error)")))
            }
        case (.json, _):
            let bytes: [UInt8] = switch wire { case .text(let text): Array(text.utf8); case .binary(let bytes): bytes }
            if let text = try? JSONDecoder().decode(String.self, from: Data(bytes)) { // not a JSON string: delivered as JSON text below
                hub.emit(.data(.text(text)))
            } else if let text = String(validating: bytes, as: UTF8.self) {
                hub.emit(.data(.text(text)))
            } else {
                hub.emit(.error(PeerError(.invalidArgument, "\(peer) sent JSON that is not UTF-8")))
            }
        default:
            hub.emit(.data(wire))
        }
    }

    func receive(_ message: PeerJSMessage) async {
        guard let converted = ConnectionSignaling.incoming(message, from: peer, report: { hub.emit(.error($0)) }) else { return }
        let pc = state.withLock { $0.closed ? nil : $0.inbox.route(converted) }
        await pc?.receive(converted)
    }

    func end(error: PeerError?) async {
        let taken = state.withLock { state -> (PeerConnection?, DataChannelHandle?, [Task<Void, Never>])? in
            guard !state.closed else { return nil }
            state.closed = true
            defer { state.tasks = []; state.inbox.peerConnection = nil; state.channel = nil }
            return (state.inbox.peerConnection, state.channel, state.tasks)
        }
        guard let (pc, channel, tasks) = taken else { return }
        if let error { hub.emit(.error(error), lasting: true) }
        if let channel {
            if let notice = closeNotice { await sayClosing(on: channel, notice) }
            await closeCompletely(channel)
        }
        await pc?.close()
        tasks.forEach { $0.cancel() }
        hub.emit(.close)
        hub.finish()
        onEnded(self)
    }

    private func keep(_ task: Task<Void, Never>) {
        let closed = state.withLock { state in
            if !state.closed { state.tasks.append(task) }
            return state.closed
        }
        if closed { task.cancel() }
    }
}
