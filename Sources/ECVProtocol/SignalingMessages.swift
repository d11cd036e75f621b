import Foundation

/// One trickled ICE candidate in AppRTC's field names: `label` is the m-line index, `id` the mid.
public struct ICECandidate: Codable, Sendable, Hashable {
    public var sdpMLineIndex: Int
    public var sdpMid: String
    public var candidate: String

    public init(sdpMLineIndex: Int, sdpMid: String, candidate: String) {
        self.sdpMLineIndex = sdpMLineIndex
        self.sdpMid = sdpMid
        self.candidate = candidate
    }
}

/// The payloads peers exchange through the room server and the collider. On the wire each is a
/// JSON object, itself carried as a *string* inside `messages`, `msg` or a `/message` body.
public enum SignalingMessage: Codable, Sendable, Hashable {
    case offer(sdp: String)
    case answer(sdp: String)
    case candidate(ICECandidate)
    /// The sender is leaving the call.
    case bye

    public enum Kind: String, WireEnum {
        case offer, answer, candidate, bye
    }

    public var kind: Kind {
        switch self {
        case .offer: .offer
        case .answer: .answer
        case .candidate: .candidate
        case .bye: .bye
        }
    }

    private enum CodingKeys: String, CodingKey { case type, sdp, label, id, candidate }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        switch try container.decode(Kind.self, forKey: .type) {
        case .offer: self = .offer(sdp: try container.decodeNonEmptyString(forKey: .sdp))
        case .answer: self = .answer(sdp: try container.decodeNonEmptyString(forKey: .sdp))
        case .candidate:
            let index = try container.decode(Int.self, forKey: .label)
            guard index >= 0 else {
                throw DecodingError.dataCorruptedError(
                    forKey: .label, in: container, debugDescription: "an m-line index is never negative")
            }
            self = .candidate(ICECandidate(sdpMLineIndex: index,
                                           sdpMid: try container.decode(String.self, forKey: .id),
                                           candidate: try container.decodeNonEmptyString(forKey: .candidate)))
        case .bye: self = .bye
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(kind, forKey: .type)
        switch self {
        case .offer(let sdp), .answer(let sdp):
            try container.encode(sdp, forKey: .sdp)
        case .candidate(let candidate):
            try container.encode(candidate.sdpMLineIndex, forKey: .label)
            try container.encode(candidate.sdpMid, forKey: .id)
            try container.encode(candidate.candidate, forKey: .candidate)
        case .bye:
            break
        }
    }

    /// The string form that travels inside `messages`, `msg` and `/message` bodies.
    public func jsonString() throws(ProtocolError) -> String { try ECVJSON.encodeString(self) }

    public init(jsonString: String) throws(ProtocolError) {
        self = try ECVJSON.decode(SignalingMessage.self, from: jsonString)
    }
}

/// What a client sends on the collider WebSocket (`/ws` under signalingUrl).
public enum ColliderCommand: Codable, Sendable, Hashable {
    /// First frame on the socket: bind it to a client that joined the room over HTTP.
    case register(roomId: String, clientId: String)
    /// Relay a payload to the other client of the room.
    case send(SignalingMessage)

    public enum Command: String, WireEnum { case register, send }

    private enum CodingKeys: String, CodingKey { case cmd, roomid, clientid, msg }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        switch try container.decode(Command.self, forKey: .cmd) {
        case .register:
            self = .register(roomId: try container.decodeNonEmptyString(forKey: .roomid),
                             clientId: try container.decodeNonEmptyString(forKey: .clientid))
        case .send:
            self = .send(try container.decodeEmbeddedJSON(SignalingMessage.self, forKey: .msg))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .register(let roomId, let clientId):
            try container.encode(Command.register, forKey: .cmd)
            try container.encode(roomId, forKey: .roomid)
            try container.encode(clientId, forKey: .clientid)
        case .send(let message):
            try container.encode(Command.send, forKey: .cmd)
            try container.encodeEmbeddedJSON(message, forKey: .msg)
        }
    }
}

/// What the collider delivers: `{"msg":"<payload json>","error":""}` or, on failure,
/// `{"msg":"","error":"<text>"}`.
public enum ColliderDelivery: Codable, Sendable, Hashable {
    case message(SignalingMessage)
    case failure(String)

    private enum CodingKeys: String, CodingKey { case msg, error }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let error = try container.decodeIfPresent(String.self, forKey: .error) ?? ""
        if !error.isEmpty {
            self = .failure(error)
        } else {
            self = .message(try container.decodeEmbeddedJSON(SignalingMessage.self, forKey: .msg))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .message(let message):
            try container.encodeEmbeddedJSON(message, forKey: .msg)
            try container.encode("", forKey: .error)
        case .failure(let error):
            try container.encode("", forKey: .msg)
            try container.encode(error, forKey: .error)
        }
    }
}
