import GLibCore
import GStreamer
import MediaPipeline
import Synchronization

/// What a data channel reports.
package enum DataChannelEvent: Sendable, Equatable {
    case open
    case closed
    case error(String)
    case text(String)
    case binary([UInt8])
}

/// Why a message was not sent.
package enum DataChannelError: Error, Sendable, Equatable, CustomStringConvertible {
    case closed(label: String)
    case queueFull(label: String, limit: Int)
    case sendFailed(label: String, reason: String)

    package var description: String {
        switch self {
        case .closed(let label): "data channel '\(label)' is closed; message not sent"
        case .queueFull(let label, let limit): "data channel '\(label)' is not open and already holds \(limit) queued messages"
        case .sendFailed(let label, let reason): "data channel '\(label)': \(reason)"
        }
    }
}

/// A data channel that outlives the `webrtcbin` it runs on.
///
/// Messages sent before the channel opens are queued (up to `queueLimit`) and flushed in order
/// when it opens, because GStreamer 1.22 must never be asked to send on a channel that is not
/// open. When the peer connection is rebuilt, the handle is bound to the new channel of the same
/// label and carries on.
package final class DataChannelHandle: Sendable {
    package enum Message: Sendable, Equatable {
        case text(String)
        case binary([UInt8])
    }

    package let label: String
    package let queueLimit: Int
    private let broadcaster = Broadcaster<DataChannelEvent>()

    private struct State {
        var channel: DataChannel?
        var connections: [SignalConnection] = []
        var isOpen = false
        var closedForGood = false
        var pending: [Message] = []
    }
    private let state = Mutex(State())

    init(label: String, queueLimit: Int = 256) {
        self.label = label
        self.queueLimit = queueLimit
    }

    /// Every event from now on.
    package func events() -> AsyncStream<DataChannelEvent> { broadcaster.subscribe() }

    package var isOpen: Bool { state.withLock { $0.isOpen } }
    /// True while a webrtcbin channel is behind the handle (open or still connecting).
    var isBound: Bool { state.withLock { $0.channel != nil } }
    /// The label of the channel behind the handle: the remote's own when it was adopted.
    package var boundLabel: String? { state.withLock { $0.channel?.label } }
    package var queuedCount: Int { state.withLock { $0.pending.count } }
    package var bufferedAmount: UInt64 { state.withLock { $0.channel?.bufferedAmount ?? 0 } }
    /// The channel's negotiated parameters, from the channel currently bound.
    package var id: Int { state.withLock { $0.channel?.id ?? -1 } }
    package var ordered: Bool { state.withLock { $0.channel?.ordered ?? true } }

    package func send(_ text: String) throws(DataChannelError) { try send(.text(text)) }
    package func send(data: [UInt8]) throws(DataChannelError) { try send(.binary(data)) }

    /// Sends now when open, queues while connecting, throws when closed for good or the queue is full.
    package func send(_ message: Message) throws(DataChannelError) {
        try state.withLock { state throws(DataChannelError) in
            if state.closedForGood { throw .closed(label: label) }
            guard state.isOpen, let channel = state.channel else {
                guard state.pending.count < queueLimit else { throw .queueFull(label: label, limit: queueLimit) }
                state.pending.append(message)
                return
            }
            try Self.transmit(message, on: channel, label: label)
        }
    }

    private static func transmit(_ message: Message, on channel: DataChannel, label: String) throws(DataChannelError) {
        do throws(GStreamerError) {
            switch message {
            case .text(let text): try channel.send(text: text)
            case .binary(let bytes): try channel.send(data: bytes)
            }
        } catch {
            throw .sendFailed(label: label, reason: error.description)
        }
    }

    /// Closes the channel for good: nothing more is sent, queued messages are dropped.
    package func close() {
        let channel = state.withLock { state -> DataChannel? in
            state.closedForGood = true
            state.pending.removeAll()
            return state.channel
        }
        channel?.close()
    }

    // MARK: Binding to webrtcbin channels

    /// Attaches the handle to a (new) underlying channel and forwards its signals.
    func bind(_ channel: DataChannel) throws(GStreamerError) {
        unbind()
        let connections = [
            try channel.connect("on-open") { [weak self] _ in self?.opened() },
            try channel.connect("on-close") { [weak self] _ in self?.closedByChannel() },
            try channel.connect("on-error") { [weak self] arguments in
                self?.broadcaster.yield(.error(arguments[1].stringValue ?? "unknown data channel error"))
            },
            try channel.connect("on-message-string") { [weak self] arguments in
                self?.broadcaster.yield(.text(arguments[1].stringValue ?? ""))
            },
            try channel.connect("on-message-data") { [weak self] arguments in
                if case .bytes(let bytes) = arguments[1] { self?.broadcaster.yield(.binary(bytes)) }
            },
        ]
        state.withLock { state in
            state.channel = channel
            state.connections = connections
        }
        if channel.readyState == .open { opened() }
    }

    /// Detaches from the current channel (before its webrtcbin goes), closing it first:
    /// GStreamer 1.22 deadlocks when a pipeline is torn down under an open channel.
    func unbind(closing: Bool = false) {
        let (channel, connections) = state.withLock { state -> (DataChannel?, [SignalConnection]) in
            defer {
                state.channel = nil
                state.connections = []
                state.isOpen = false
            }
            return (state.channel, state.connections)
        }
        for connection in connections { connection.cancel() }
        if closing { channel?.close() }
    }

    /// Ends the handle's event stream (the peer connection is closing).
    func finish() {
        unbind(closing: true)
        state.withLock { $0.closedForGood = true }
        broadcaster.yield(.closed)
        broadcaster.finish()
    }

    /// Marks the channel open once (webrtcbin's on-open and our own state check can both report
    /// it), flushing queued messages in order before anything sent later.
    private func opened() {
        let outcome: (opened: Bool, failure: DataChannelError?) = state.withLock { state in
            guard !state.isOpen, let channel = state.channel else { return (false, nil) }
            state.isOpen = true
            defer { state.pending.removeAll() }
            for message in state.pending {
                do throws(DataChannelError) { try Self.transmit(message, on: channel, label: label) } catch { return (true, error) }
            }
            return (true, nil)
        }
        guard outcome.opened else { return }
        broadcaster.yield(.open)
        if let failure = outcome.failure { broadcaster.yield(.error(failure.description)) }
    }

    private func closedByChannel() {
        let wasOpen = state.withLock { state in defer { state.isOpen = false }; return state.isOpen }
        if wasOpen { broadcaster.yield(.closed) }
    }
}

extension DataChannelConfig {
    /// webrtcbin's `create-data-channel` options for this configuration.
    var webrtcOptions: Structure {
        var fields: [(String, any ValueConvertible)] = [("ordered", ordered)]
        if maxRetransmits >= 0 { fields.append(("max-retransmits", maxRetransmits)) }
        if maxRetransmitTimeMs >= 0 { fields.append(("max-packet-lifetime", maxRetransmitTimeMs)) }
        if !self.protocol.isEmpty { fields.append(("protocol", self.protocol)) }
        if negotiated {
            fields.append(("negotiated", true))
            fields.append(("id", id))
        }
        return Structure(name: "application/data-channel", fields: fields)
    }
}
