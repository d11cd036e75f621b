import Foundation

/// AppRTC's `result` values. Every room-server answer is HTTP 200 with one of these.
public enum RoomResult: String, WireEnum {
    case success = "SUCCESS"
    /// A third client tried to join a two-party room.
    case full = "FULL"
    case unknownRoom = "UNKNOWN_ROOM"
    case unknownClient = "UNKNOWN_CLIENT"
    case duplicateClient = "DUPLICATE_CLIENT"
    /// The request body is not a valid signaling payload.
    case invalidRequest = "INVALID_REQUEST"
    case error = "ERROR"
}

/// `POST /join/<room>` → `{"result":…,"params":{…}}`. `params` is required for SUCCESS and
/// ignored otherwise.
public struct JoinResponse: Codable, Sendable, Equatable {
    public var result: RoomResult
    public var params: JoinParameters?

    public init(result: RoomResult, params: JoinParameters? = nil) {
        self.result = result
        self.params = params
    }

    private enum CodingKeys: String, CodingKey { case result, params }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        result = try container.decode(RoomResult.self, forKey: .result)
        params = result == .success ? try container.decode(JoinParameters.self, forKey: .params) : nil
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(result, forKey: .result)
        try container.encodeIfPresent(params, forKey: .params)
    }
}

/// The `params` of a successful join. AppRTC encodes several values as strings: `is_initiator`
/// (`"true"`/`"false"`), `pc_config` (a JSON object in a string) and each entry of `messages`
/// (a signaling payload in a string). These types hold the decoded values.
public struct JoinParameters: Codable, Sendable, Equatable {
    public var roomId: String
    public var clientId: String
    public var isInitiator: Bool
    /// What the other client posted before this one joined, in order (empty for the initiator).
    public var messages: [SignalingMessage]
    /// The collider WebSocket, e.g. `ws://127.0.0.1:8080/ws`.
    public var wssUrl: String
    /// The collider's HTTP base for POST/DELETE `/<room>/<client>`.
    public var wssPostUrl: String
    public var pcConfig: PeerConnectionConfig
    /// The browser URL of the room (`<webrtcUrl>/r/<room>`), when the server provides it.
    public var roomLink: String?

    public init(roomId: String, clientId: String, isInitiator: Bool, messages: [SignalingMessage] = [],
                wssUrl: String, wssPostUrl: String, pcConfig: PeerConnectionConfig, roomLink: String? = nil) {
        self.roomId = roomId
        self.clientId = clientId
        self.isInitiator = isInitiator
        self.messages = messages
        self.wssUrl = wssUrl
        self.wssPostUrl = wssPostUrl
        self.pcConfig = pcConfig
        self.roomLink = roomLink
    }

    private enum CodingKeys: String, CodingKey {
        case roomId = "room_id", clientId = "client_id", isInitiator = "is_initiator", messages
        case wssUrl = "wss_url", wssPostUrl = "wss_post_url", pcConfig = "pc_config", roomLink = "room_link"
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        roomId = try container.decodeNonEmptyString(forKey: .roomId)
        clientId = try container.decodeNonEmptyString(forKey: .clientId)
        isInitiator = try Self.decodeStringBool(container, key: .isInitiator)
        var decoded: [SignalingMessage] = []
        // Not an array: absent and null are fine, anything else throws in the `else if` below.
        if var list = try? container.nestedUnkeyedContainer(forKey: .messages) {
            while !list.isAtEnd {
                let index = list.currentIndex
                let text = try list.decode(String.self)
                do {
                    decoded.append(try ECVJSON.decode(SignalingMessage.self, from: text))
                } catch {
                    throw error.prefixed(by: ECVJSON.codingPathString(
                        container.codingPath + [CodingKeys.messages, IndexKey(index)]))
                }
            }
        } else if container.contains(.messages), try !container.decodeNil(forKey: .messages) {
            throw DecodingError.typeMismatch([String].self, .init(
                codingPath: container.codingPath + [CodingKeys.messages],
                debugDescription: "expected an array of JSON strings"))
        }
        messages = decoded
        wssUrl = try container.decodeNonEmptyString(forKey: .wssUrl)
        wssPostUrl = try container.decodeNonEmptyString(forKey: .wssPostUrl)
        pcConfig = try container.decodeEmbeddedJSON(PeerConnectionConfig.self, forKey: .pcConfig)
        roomLink = try container.decodeIfPresent(String.self, forKey: .roomLink)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(roomId, forKey: .roomId)
        try container.encode(clientId, forKey: .clientId)
        try container.encode(isInitiator ? "true" : "false", forKey: .isInitiator)
        try container.encode(try messages.map { try ECVJSON.encodeString($0) }, forKey: .messages)
        try container.encode(wssUrl, forKey: .wssUrl)
        try container.encode(wssPostUrl, forKey: .wssPostUrl)
        try container.encodeEmbeddedJSON(pcConfig, forKey: .pcConfig)
        try container.encodeIfPresent(roomLink, forKey: .roomLink)
    }

    /// AppRTC sends `"true"`/`"false"`; a JSON boolean is accepted too.
    private static func decodeStringBool(_ container: KeyedDecodingContainer<CodingKeys>, key: CodingKeys) throws -> Bool {
        // Not a JSON boolean: the string form is tried next, and its failure is the one thrown.
        if let flag = try? container.decode(Bool.self, forKey: key) { return flag }
        switch try container.decode(String.self, forKey: key) {
        case "true": return true
        case "false": return false
        case let other:
            throw DecodingError.dataCorruptedError(
                forKey: key, in: container, debugDescription: "expected \"true\" or \"false\", got \"\(other)\"")
        }
    }
}

/// The decoded `pc_config`: an RTCConfiguration subset.
public struct PeerConnectionConfig: Codable, Sendable, Equatable {
    /// May be empty; the SDK then uses its configured servers, or fails with NO_ICE_SERVERS_FOUND.
    public var iceServers: [ICEServer]
    public var bundlePolicy: String?
    public var rtcpMuxPolicy: String?

    public init(iceServers: [ICEServer], bundlePolicy: String? = nil, rtcpMuxPolicy: String? = nil) {
        self.iceServers = iceServers
        self.bundlePolicy = bundlePolicy
        self.rtcpMuxPolicy = rtcpMuxPolicy
    }
}

/// One STUN or TURN server. `urls` may arrive as a string or an array, and legacy clients send
/// `url`; it is always encoded as an array under `urls`.
public struct ICEServer: Codable, Sendable, Equatable {
    public var urls: [String]
    public var username: String?
    public var credential: String?

    public init(urls: [String], username: String? = nil, credential: String? = nil) {
        self.urls = urls
        self.username = username
        self.credential = credential
    }

    private enum CodingKeys: String, CodingKey { case urls, url, username, credential }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let key: CodingKeys = container.contains(.urls) ? .urls : .url
        // Not a single string: the array form is tried next, and its failure is the one thrown.
        if let single = try? container.decode(String.self, forKey: key) {
            urls = [single]
        } else {
            urls = try container.decode([String].self, forKey: key)
        }
        guard !urls.isEmpty else {
            throw DecodingError.dataCorruptedError(forKey: key, in: container, debugDescription: "must not be empty")
        }
        for (index, url) in urls.enumerated() where !Self.isICEURL(url) {
            throw DecodingError.dataCorrupted(.init(
                codingPath: container.codingPath + [key, IndexKey(index)],
                debugDescription: "\"\(url)\" is not a stun:, stuns:, turn: or turns: URL"))
        }
        username = try container.decodeIfPresent(String.self, forKey: .username)
        credential = try container.decodeIfPresent(String.self, forKey: .credential)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(urls, forKey: .urls)
        try container.encodeIfPresent(username, forKey: .username)
        try container.encodeIfPresent(credential, forKey: .credential)
    }

    public var isTURN: Bool { urls.contains { $0.hasPrefix("turn:") || $0.hasPrefix("turns:") } }

    static func isICEURL(_ url: String) -> Bool {
        for scheme in ["stun:", "stuns:", "turn:", "turns:"] where url.hasPrefix(scheme) {
            return url.count > scheme.count
        }
        return false
    }
}

/// An array index as a coding-path element (for errors that name `…[3].field`).
public struct IndexKey: CodingKey, Sendable {
    public var intValue: Int?
    public var stringValue: String { "\(intValue ?? 0)" }
    public init(_ index: Int) { intValue = index }
    public init?(intValue: Int) { self.intValue = intValue }
    public init?(stringValue: String) { nil }
}

/// The answer of `POST /message/<room>/<client>` and `POST /leave/<room>/<client>`.
public struct RoomResponse: Codable, Sendable, Equatable {
    public var result: RoomResult

    public init(result: RoomResult) { self.result = result }
}
