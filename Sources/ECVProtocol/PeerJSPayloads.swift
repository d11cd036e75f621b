import Foundation

/// What a PeerJS connection carries: media (a call) or data (a data channel).
public enum PeerJSConnectionType: String, Sendable, Hashable {
    case media, data
}

/// How a PeerJS data connection encodes its messages (`serialization`).
public enum PeerJSSerialization: String, Sendable, Hashable {
    /// BinaryPack (PeerJS's default): we read and write its strings and binaries.
    case binary
    case binaryUTF8 = "binary-utf8"
    case json
    /// Strings and bytes as they are.
    case raw
    /// An older name of `raw`.
    case none
}

/// The payload of an OFFER or ANSWER as PeerJS writes it:
/// `{"sdp":{"type":"offer","sdp":"v=0…"},"type":"media","connectionId":"mc_…",…}`; a data
/// connection's offer adds `label`, `reliable` and `serialization`.
public struct PeerJSDescriptionPayload: Sendable, Hashable {
    public var sdpType: String
    public var sdp: String
    public var connectionType: PeerJSConnectionType
    public var connectionId: String
    public var label: String?
    public var reliable: Bool?
    public var serialization: PeerJSSerialization?
    public var metadata: PeerJSValue?
    public var browser: String?

    public init(sdpType: String, sdp: String, connectionType: PeerJSConnectionType, connectionId: String, label: String? = nil,
                reliable: Bool? = nil, serialization: PeerJSSerialization? = nil, metadata: PeerJSValue? = nil, browser: String? = "ecvkit") {
        self.sdpType = sdpType
        self.sdp = sdp
        self.connectionType = connectionType
        self.connectionId = connectionId
        self.label = label
        self.reliable = reliable
        self.serialization = serialization
        self.metadata = metadata
        self.browser = browser
    }

    public init(_ payload: PeerJSValue?) throws(ProtocolError) {
        guard let payload, case .object = payload else { throw .missingField("payload") }
        guard let description = payload["sdp"], let sdp = description["sdp"]?.stringValue, !sdp.isEmpty else {
            throw .missingField("payload.sdp.sdp")
        }
        guard sdp.utf8.count <= PeerJSLimits.maxSDPBytes else {
            throw .invalidValue(field: "payload.sdp.sdp", reason: "longer than \(PeerJSLimits.maxSDPBytes) bytes")
        }
        let sdpType = description["type"]?.stringValue ?? ""
        guard sdpType == "offer" || sdpType == "answer" else {
            throw .invalidValue(field: "payload.sdp.type", reason: "\"\(sdpType.prefix(40))\" is neither offer nor answer")
        }
        (connectionType, connectionId) = try Self.connection(of: payload)
        self.sdpType = sdpType
        self.sdp = sdp
        label = payload["label"]?.stringValue
        reliable = payload["reliable"]?.boolValue
        // A name PeerJS does not define is taken as `raw` (text and bytes as they come), so the
        // offer is answered rather than left to time out.
        serialization = payload["serialization"]?.stringValue.map { PeerJSSerialization(rawValue: $0) ?? .raw }
        metadata = payload["metadata"]
        browser = payload["browser"]?.stringValue
    }

    public var value: PeerJSValue {
        .fields([
            ("sdp", .object(["type": .string(sdpType), "sdp": .string(sdp)])),
            ("type", .string(connectionType.rawValue)),
            ("connectionId", .string(connectionId)),
            ("label", label.map(PeerJSValue.string)),
            ("reliable", reliable.map(PeerJSValue.bool)),
            ("serialization", serialization.map { .string($0.rawValue) }),
            ("metadata", metadata),
            ("browser", browser.map(PeerJSValue.string)),
        ])
    }

    /// `type` and `connectionId`, which every connection message carries.
    static func connection(of payload: PeerJSValue) throws(ProtocolError) -> (PeerJSConnectionType, String) {
        guard let name = payload["type"]?.stringValue else { throw .missingField("payload.type") }
        guard let type = PeerJSConnectionType(rawValue: name) else {
            throw .invalidValue(field: "payload.type", reason: "\"\(name.prefix(40))\" is neither media nor data")
        }
        guard let id = payload["connectionId"]?.stringValue, !id.isEmpty, id.utf8.count <= PeerJSLimits.maxIdLength else {
            throw .invalidValue(field: "payload.connectionId", reason: "a connection id of 1 to \(PeerJSLimits.maxIdLength) bytes")
        }
        return (type, id)
    }
}

/// The payload of a CANDIDATE: `{"candidate":{"candidate":"candidate:…","sdpMLineIndex":0,
/// "sdpMid":"0"},"type":"media","connectionId":"mc_…"}`.
public struct PeerJSCandidatePayload: Sendable, Hashable {
    public var candidate: String
    public var sdpMLineIndex: Int
    public var sdpMid: String?
    public var connectionType: PeerJSConnectionType
    public var connectionId: String

    public init(candidate: String, sdpMLineIndex: Int, sdpMid: String?, connectionType: PeerJSConnectionType, connectionId: String) {
        self.candidate = candidate
        self.sdpMLineIndex = sdpMLineIndex
        self.sdpMid = sdpMid
        self.connectionType = connectionType
        self.connectionId = connectionId
    }

    public init(_ payload: PeerJSValue?) throws(ProtocolError) {
        guard let payload, case .object = payload else { throw .missingField("payload") }
        guard let body = payload["candidate"], let text = body["candidate"]?.stringValue else { throw .missingField("payload.candidate.candidate") }
        guard text.utf8.count <= PeerJSLimits.maxCandidateBytes else {
            throw .invalidValue(field: "payload.candidate.candidate", reason: "longer than \(PeerJSLimits.maxCandidateBytes) bytes")
        }
        let index = body["sdpMLineIndex"]?.intValue ?? 0
        guard (0...64).contains(index) else { throw .invalidValue(field: "payload.candidate.sdpMLineIndex", reason: "0 to 64") }
        (connectionType, connectionId) = try PeerJSDescriptionPayload.connection(of: payload)
        candidate = text
        sdpMLineIndex = index
        sdpMid = body["sdpMid"]?.stringValue
    }

    public var value: PeerJSValue {
        .fields([
            ("candidate", .fields([("candidate", .string(candidate)), ("sdpMLineIndex", .number(Double(sdpMLineIndex))),
                                   ("sdpMid", sdpMid.map(PeerJSValue.string))])),
            ("type", .string(connectionType.rawValue)),
            ("connectionId", .string(connectionId)),
        ])
    }
}
