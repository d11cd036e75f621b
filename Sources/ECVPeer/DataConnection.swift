import CallEngine
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

extension DataMessage {
    var channelMessage: DataChannelHandle.Message {
        switch self {
        case .text(let text): .text(text)
        case .binary(let bytes): .binary(bytes)
        }
    }
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
    let signaling: PeerJSLegSignaling
    private let ice: @Sendable () -> PeerICE
    private let onEnded: @Sendable (DataConnection) -> Void
    let hub = EventHub<DataConnectionEvent>()
    /// The largest message either way, in bytes as encoded: BinaryPack messages over 16 300 bytes
    /// go in chunks, as PeerJS sends them; JSON messages stay under 16 300 bytes, as PeerJS
    /// requires (DataSerialization).
    public static let maxMessageBytes = 16 << 20

    private struct State {
        var leg: CallLeg?
        var channel: DataChannelHandle?
        var started = false
        var open = false
        var closed = false
        var wire: DataSerialization
        /// The silence that ends the connection (`PeerOption.dataConnectionSilenceLimit`), for its error.
        var silenceLimit: Duration?
    }
    private let state: Mutex<State>
    /// The connection's own tasks (its channel's reader), cancelled when it ends.
    private let tasks = TaskSet()

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
        state = Mutex(State(wire: DataSerialization(serialization, maxMessageBytes: Self.maxMessageBytes)))
        signaling = PeerJSLegSignaling(ConnectionSignaling(remotePeer: peer, connectionId: connectionId, type: .data, send: send) { payload in
            payload.label = label
            payload.reliable = reliable
            // `none` is an old name of `raw` that PeerJS 1.5 cannot create: never on the wire.
            payload.serialization = serialization == .none ? .raw : serialization
            payload.metadata = metadata
        }, role: outgoing ? .offerer : .answerer)
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
        let frames: [DataMessage]
        do throws(DataSerialization.WriteError) { frames = try state.withLock { state throws(DataSerialization.WriteError) in try state.wire.frames(for: message) } } catch {
            switch error {
            case .tooBig(let size, let limit): throw PeerError(.messageTooBig, "\(size) bytes; a \(serialization.rawValue) data message is at most \(limit) bytes")
            case .notJSON(let reason): throw PeerError(.invalidArgument, reason)
            }
        }
        do throws(DataChannelError) { for frame in frames { try channel.send(frame.channelMessage) } } catch {
            // webrtcbin refuses a frame over the SCTP message size (a raw message goes unchunked).
            if case .sendFailed = error { throw PeerError(.webrtc, "\(error)") }
            throw PeerError(.notOpenYet, "\(error)")
        }
    }

    /// Ends the connection on both sides. Idempotent; CLOSE follows.
    public func close() { Task { await self.end(error: nil) } }

    public func closeAndWait() async { await end(error: nil) }

    // MARK: Set-up

    func start() async {
        guard state.withLock({ state in defer { state.started = true }; return !state.started && !state.closed }) else { return }
        var media = MediaConfiguration(sendsMedia: false)
        media.receivesMedia = false
        let ice = ice()
        var configuration = peerConfiguration(ice: ice, media: media)
        // An idle data connection carries only SCTP heartbeats (an exchange every ~32 s): a far
        // end that vanished without a close is one whose transport brought nothing for longer
        // than that (webrtcbin 1.22's libnice checks no ICE consent).
        configuration.disconnectedAfter = ice.dataSilenceLimit
        configuration.failedAfter = ice.dataSilenceLimit
        state.withLock { $0.silenceLimit = ice.dataSilenceLimit }
        let config = DataChannelConfig(enabled: true, label: label, ordered: reliable)
        var plan = CallLegPlan(peer: configuration)
        plan.createdChannels = outgoing ? [config] : []
        // The callee knows the label from the offer: its handle exists (and is listened to) before
        // the channel opens, so nothing sent right after the open is missed.
        plan.boundChannels = [config]
        plan.rebuildsWhenFailed = false
        let leg = CallLeg(plan: plan, signaling: signaling, observer: self)
        guard state.withLock({ state in if !state.closed { state.leg = leg }; return !state.closed }) else { return }
        do { try await leg.start() } catch {
            guard !leg.isClosed else { return }
            await end(error: PeerError(legFailure: error, starting: "the data connection"))
        }
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
        tasks.run { [weak self] in
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
        }
    }

    private func opened() {
        guard state.withLock({ state in defer { state.open = true }; return !state.open && !state.closed }) else { return }
        hub.emit(.open)
    }

    /// A frame as the channel carried it, decoded as the serialization says (DataSerialization).
    private func deliver(_ frame: DataMessage) {
        switch state.withLock({ $0.wire.read(frame) }) {
        case .message(let message): hub.emit(.data(message))
        case .close: Task { await self.end(error: nil) }
        case .pending: break
        case .unreadable(let reason): hub.emit(.error(PeerError(.invalidArgument, "\(peer) sent a message this side cannot read: \(reason)")))
        }
    }

    func receive(_ message: PeerJSMessage) async {
        guard let converted = ConnectionSignaling.incoming(message, from: peer, report: { hub.emit(.error($0)) }) else { return }
        signaling.deliver(converted)
    }

    /// - Parameter farEndGone: the far end closed its peer connection: nobody is left to tell.
    func end(error: PeerError?, farEndGone: Bool = false) async {
        let taken = state.withLock { state -> (CallLeg?, DataChannelHandle?)? in
            guard !state.closed else { return nil }
            state.closed = true
            defer { state.leg = nil; state.channel = nil }
            return (state.leg, state.channel)
        }
        guard let (leg, channel) = taken else { return }
        if let error { hub.emit(.error(error), lasting: true) }
        tasks.cancelAll()
        let notice = farEndGone ? nil : state.withLock { $0.wire.closeNotice }
        let closing: @Sendable (DataChannelHandle) async -> Void = { channel in
            if farEndGone { channel.close(); return }
            // PeerJS's in-band close, what its `close({flush: true})` sends; raw connections have none.
            if let notice { await sayClosing(on: channel, notice.channelMessage) }
            await closeCompletely(channel)
        }
        // The channel the far end opened, when it is not the leg's own handle, closes first.
        if let channel, leg?.channels.contains(where: { $0 === channel }) != true { await closing(channel) }
        await leg?.close(sendBye: false, closing: closing)
        hub.emit(.close)
        hub.finish()
        onEnded(self)
    }
}

extension DataConnection: CallLegObserver {
    package func leg(_ leg: CallLeg, completed step: CallLegStep) async {
        if case .mediaStarted(let channels) = step, let channel = channels.first { bind(channel) }
    }

    package func leg(_ leg: CallLeg, observed event: CallLegEvent) async {
        guard case .peer(let event) = event else { return }
        switch event {
        case .remoteDataChannel(let handle) where !outgoing: bind(handle)
        case .stateChanged(.failed):
            // Once open, what fails it is the silence limit (webrtcbin 1.22 sees no ICE consent lost).
            let silence = state.withLock { $0.open ? $0.silenceLimit : nil }
            let reason = silence.map { " (nothing arrived from it for \($0.components.seconds) s: it vanished, or its network did)" } ?? ""
            await end(error: PeerError(.webrtc, "the connection to \(peer) failed\(reason)"))
        // PeerJS closes a data connection by closing its RTCPeerConnection, often before its channel closes.
        case .farEndClosed: await end(error: nil, farEndGone: true)
        default: break
        }
    }
}
