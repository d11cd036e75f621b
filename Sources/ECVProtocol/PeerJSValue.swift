import Foundation

/// Any JSON value, for the parts of a PeerJS message the server relays without reading
/// (`payload`, a connection's `metadata`): what a client sent reaches the other client unchanged.
public indirect enum PeerJSValue: Codable, Sendable, Hashable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([PeerJSValue])
    case object([String: PeerJSValue])

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) { // not a boolean: one of the other kinds below
            self = .bool(value)
        } else if let value = try? container.decode(Double.self) { // not a number: one of the other kinds below
            guard value.isFinite else {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "a JSON number is finite")
            }
            self = .number(value)
        } else if let value = try? container.decode(String.self) { // not a string: an array or an object below
            self = .string(value)
        } else if let value = try? container.decode([PeerJSValue].self) { // not an array: an object below
            self = .array(value)
        } else {
            self = .object(try container.decode([String: PeerJSValue].self))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .number(let value):
            // Integral numbers as integers: `"sdpMLineIndex":0`, never `0.0`.
            if value.rounded() == value, abs(value) < 1e15 { try container.encode(Int64(value)) } else { try container.encode(value) }
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }

    /// How deeply arrays and objects nest (a scalar is 0).
    public var depth: Int {
        switch self {
        case .array(let values): 1 + (values.map(\.depth).max() ?? 0)
        case .object(let values): 1 + (values.values.map(\.depth).max() ?? 0)
        default: 0
        }
    }

    /// Values in the tree, this one included.
    public var nodeCount: Int {
        switch self {
        case .array(let values): 1 + values.reduce(0) { $0 + $1.nodeCount }
        case .object(let values): 1 + values.values.reduce(0) { $0 + $1.nodeCount }
        default: 1
        }
    }

    public subscript(key: String) -> PeerJSValue? {
        if case .object(let values) = self { values[key] } else { nil }
    }

    public var stringValue: String? {
        if case .string(let value) = self { value } else { nil }
    }

    public var boolValue: Bool? {
        if case .bool(let value) = self { value } else { nil }
    }

    /// The number when it is a whole number that fits an Int.
    public var intValue: Int? {
        if case .number(let value) = self, value.rounded() == value, abs(value) < 1e15 { Int(value) } else { nil }
    }

    /// An object from key–value pairs, dropping nil values.
    public static func fields(_ pairs: [(String, PeerJSValue?)]) -> PeerJSValue {
        .object(Dictionary(pairs.compactMap { key, value in value.map { (key, $0) } }, uniquingKeysWith: { _, last in last }))
    }
}
