import Foundation

/// Any JSON document, for comparing what a type re-encodes with what the document said.
/// JSONDecoder is strict about kinds (`true` is never the number 1), so the enum is exact.
indirect enum JSONValue: Decodable, Equatable, CustomStringConvertible {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    static func parse(_ data: Data) throws -> JSONValue {
        try JSONDecoder().decode(JSONValue.self, from: data)
    }

    /// The form equivalence is judged on: `null` members dropped (a null equals an absent key) and
    /// strings that hold a JSON object or array replaced by that JSON (AppRTC's embedded JSON, whose
    /// key order is irrelevant).
    var normalized: JSONValue {
        switch self {
        case .object(let members):
            return .object(members.filter { $0.value != .null }.mapValues(\.normalized))
        case .array(let items):
            return .array(items.map(\.normalized))
        case .string(let text):
            guard let first = text.first, first == "{" || first == "[",
                  let embedded = try? JSONValue.parse(Data(text.utf8)) else { return self }
            return embedded.normalized
        default:
            return self
        }
    }

    var description: String {
        switch self {
        case .null: "null"
        case .bool(let value): "\(value)"
        case .number(let value): "\(value)"
        case .string(let value): value.debugDescription
        case .array(let items): "[" + items.map(\.description).joined(separator: ",") + "]"
        case .object(let members):
            "{" + members.sorted { $0.key < $1.key }.map { "\($0.key.debugDescription):\($0.value)" }
                .joined(separator: ",") + "}"
        }
    }
}
