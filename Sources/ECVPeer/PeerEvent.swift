/// What a peer reports (SkyWay's `SKW_PEER_EVENT_*`).
public enum PeerEvent: Sendable {
    /// Connected to the server under this peer id (also told to a listener that arrives later).
    case open(String)
    /// An incoming call: answer it with `answer(stream:)`, or close it.
    case call(MediaConnection)
    /// An incoming data connection (it opens by itself).
    case connection(DataConnection)
    case error(PeerError)
    /// Every connection with this remote peer ended: it closed them, left the server, or vanished.
    case close(String)
    /// The connection to the server is gone (the peer's id); connections with other peers go on.
    /// `reconnect()` gets it back.
    case disconnected(String)
}

public enum PeerEventType: String, Sendable, Hashable, CaseIterable {
    case OPEN, CALL, CONNECTION, ERROR, CLOSE, DISCONNECTED
}

extension PeerEvent: KindedEvent {
    public var kind: PeerEventType {
        switch self {
        case .open: .OPEN
        case .call: .CALL
        case .connection: .CONNECTION
        case .error: .ERROR
        case .close: .CLOSE
        case .disconnected: .DISCONNECTED
        }
    }

    var isLasting: Bool { if case .open = self { true } else { false } }
}

/// What `Peer.call(peerId:stream:options:)` takes besides the stream.
public struct CallOption: Sendable {
    /// Handed to the callee with the call (PeerJS `metadata`).
    public var metadata: PeerJSValue?

    public init(metadata: PeerJSValue? = nil) { self.metadata = metadata }
}

/// What `Peer.connect(peerId:options:)` takes.
public struct ConnectOption: Sendable {
    /// The data channel's label; nil: the connection id.
    public var label: String?
    /// How messages are encoded: BinaryPack by default, as PeerJS does.
    public var serialization: PeerJSSerialization
    /// Ordered, retransmitted delivery.
    public var reliable: Bool
    public var metadata: PeerJSValue?

    public init(label: String? = nil, serialization: PeerJSSerialization = .binary, reliable: Bool = true, metadata: PeerJSValue? = nil) {
        self.label = label
        self.serialization = serialization
        self.reliable = reliable
        self.metadata = metadata
    }
}
