import Foundation

/// The message types of the PeerJS server protocol (docs/protocol.md §8), spelled as on the wire.
public enum PeerJSMessageType: String, WireEnum {
    /// Server → client: the socket is registered under its id (our payload: the ICE servers).
    case open = "OPEN"
    /// Client → server → client: the sender closed its connections to the destination. Without
    /// `dst`, the sender leaves the server.
    case leave = "LEAVE"
    case candidate = "CANDIDATE"
    case offer = "OFFER"
    case answer = "ANSWER"
    /// Server → client: what the sender sent to `src` was held and nobody picked it up.
    case expire = "EXPIRE"
    /// Client → server: keeps the socket alive.
    case heartbeat = "HEARTBEAT"
    case idTaken = "ID-TAKEN"
    case invalidKey = "INVALID-KEY"
    case error = "ERROR"

    /// The types a client may send; the server relays all but `HEARTBEAT`.
    public var isClientMessage: Bool {
        switch self {
        case .heartbeat, .offer, .answer, .candidate, .leave, .expire: true
        default: false
        }
    }
}

/// Bounds on what PeerJS clients send (docs/protocol.md §8.6).
public enum PeerJSLimits {
    /// A peer id or API key: PeerJS's own rule (letters and digits, single ` `, `_` or `-`
    /// between them), at most this long.
    public static let maxIdLength = 64
    public static let maxTokenLength = 64
    /// One WebSocket frame from a client.
    public static let maxMessageBytes = 64 * 1024
    public static let maxSDPBytes = 48 * 1024
    public static let maxCandidateBytes = 1024
    /// Nesting of `payload` (PeerJS's own payloads nest 2 deep; an application's `metadata` may
    /// add more) and the values in it: a frame beyond either is not relayed (its sender hears
    /// `EXPIRE`), and an ECVKit client drops it.
    public static let maxPayloadDepth = 32
    public static let maxPayloadNodes = 4096

    /// Whether `id` is a PeerJS id (or key): `^[A-Za-z0-9]+(?:[ _-][A-Za-z0-9]+)*$`, bounded.
    public static func isValidId(_ id: String) -> Bool {
        guard !id.isEmpty, id.utf8.count <= maxIdLength else { return false }
        var previousWasSeparator = true
        for byte in id.utf8 {
            let alphanumeric = (48...57).contains(byte) || (65...90).contains(byte) || (97...122).contains(byte)
            if alphanumeric { previousWasSeparator = false; continue }
            guard byte == 32 || byte == 95 || byte == 45, !previousWasSeparator else { return false }
            previousWasSeparator = true
        }
        return !previousWasSeparator
    }

    /// A client's token: printable ASCII (spaces included: peerjs-py 0.1.1 sends its Peer
    /// object's description), bounded.
    public static func isValidToken(_ token: String) -> Bool {
        !token.isEmpty && token.utf8.count <= maxTokenLength && token.utf8.allSatisfy { (32...126).contains($0) }
    }
}

/// One PeerJS protocol message: `{"type", "src", "dst", "payload"}`. The server sets `src` on
/// everything it relays; `payload` is relayed as it came.
public struct PeerJSMessage: Codable, Sendable, Hashable {
    public var type: PeerJSMessageType
    public var src: String?
    public var dst: String?
    public var payload: PeerJSValue?

    public init(type: PeerJSMessageType, src: String? = nil, dst: String? = nil, payload: PeerJSValue? = nil) {
        self.type = type
        self.src = src
        self.dst = dst
        self.payload = payload
    }

    /// A server message with `{"msg": text}` as its payload (ERROR, ID-TAKEN, INVALID-KEY).
    public static func notice(_ type: PeerJSMessageType, _ text: String) -> PeerJSMessage {
        PeerJSMessage(type: type, payload: .object(["msg": .string(text)]))
    }

    /// The `msg` of a notice's payload.
    public var noticeText: String? { payload?["msg"]?.stringValue }

    public func jsonString() throws(ProtocolError) -> String { try ECVJSON.encodeString(self) }

    /// A message as the server or a client sends it, decoded and bounded.
    public init(jsonString text: String) throws(ProtocolError) {
        guard text.utf8.count <= PeerJSLimits.maxMessageBytes else {
            throw .invalidValue(field: "", reason: "a PeerJS message is at most \(PeerJSLimits.maxMessageBytes) bytes")
        }
        self = try ECVJSON.decode(PeerJSMessage.self, from: text)
        if let payload {
            guard payload.depth <= PeerJSLimits.maxPayloadDepth else {
                throw .invalidValue(field: "payload", reason: "nests deeper than \(PeerJSLimits.maxPayloadDepth)")
            }
            guard payload.nodeCount <= PeerJSLimits.maxPayloadNodes else {
                throw .invalidValue(field: "payload", reason: "has more than \(PeerJSLimits.maxPayloadNodes) values")
            }
        }
        for (field, id) in [("src", src), ("dst", dst)] {
            if let id, !PeerJSLimits.isValidId(id) { throw .invalidValue(field: field, reason: "\"\(id.prefix(80))\" is not a peer id") }
        }
    }
}

extension ECVJSON {
    /// A JSON array of peer ids (`GET <path>/<key>/peers`).
    public static func peerIds(from data: Data) throws(ProtocolError) -> [String] {
        let ids = try decode([String].self, from: data)
        if let bad = ids.first(where: { !PeerJSLimits.isValidId($0) }) {
            throw .invalidValue(field: "[]", reason: "\"\(bad.prefix(80))\" is not a peer id")
        }
        return ids
    }
}
