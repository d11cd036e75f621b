import Foundation

/// Why a wire message was refused. Every case names the offending field (as a path such as
/// `params.pc_config.iceServers[0].urls`) so a log line is enough to find the bad byte.
public enum ProtocolError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The bytes are not JSON, or not the JSON shape (object, array) the message needs.
    case malformedJSON(reason: String)
    /// A required field is absent or `null`.
    case missingField(String)
    /// A field is present but its type or value is not allowed.
    case invalidValue(field: String, reason: String)

    /// The path of the field at fault, or nil when the whole document is malformed.
    public var field: String? {
        switch self {
        case .malformedJSON: nil
        case .missingField(let field): field
        case .invalidValue(let field, _): field
        }
    }

    public var description: String {
        switch self {
        case .malformedJSON(let reason): "malformed JSON: \(reason)"
        case .missingField(let field): "missing field '\(field)'"
        case .invalidValue(let field, let reason): "invalid value for '\(field)': \(reason)"
        }
    }

    /// The same error seen from an enclosing document, e.g. a `pc_config` error reported from the
    /// join response as `params.pc_config.…`.
    func prefixed(by path: String) -> ProtocolError {
        guard !path.isEmpty else { return self }
        func join(_ inner: String) -> String {
            if inner.isEmpty { return path }
            return inner.hasPrefix("[") ? path + inner : path + "." + inner
        }
        switch self {
        case .malformedJSON(let reason): return .invalidValue(field: path, reason: "embedded JSON: \(reason)")
        case .missingField(let field): return .missingField(join(field))
        case .invalidValue(let field, let reason): return .invalidValue(field: join(field), reason: reason)
        }
    }
}

/// The one JSON coder configuration every ECV component uses, so encoded messages are byte-stable
/// (sorted keys, unescaped slashes) and decoding failures become `ProtocolError`s.
public enum ECVJSON {
    public static func decode<T: Decodable>(_ type: T.Type, from data: Data) throws(ProtocolError) -> T {
        do {
            return try JSONDecoder().decode(T.self, from: data)
        } catch let error as ProtocolError {
            throw error
        } catch let error as DecodingError {
            throw protocolError(from: error)
        } catch {
            throw .malformedJSON(reason: String(describing: error))
        }
    }

    public static func decode<T: Decodable>(_ type: T.Type, from text: String) throws(ProtocolError) -> T {
        try decode(type, from: Data(text.utf8))
    }

    public static func encode<T: Encodable>(_ value: T) throws(ProtocolError) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        do {
            return try encoder.encode(value)
        } catch let error as ProtocolError {
            throw error
        } catch let EncodingError.invalidValue(value, context) {
            throw .invalidValue(field: codingPathString(context.codingPath),
                                reason: "cannot encode \(value): \(context.debugDescription)")
        } catch {
            throw .malformedJSON(reason: String(describing: error))
        }
    }

    public static func encodeString<T: Encodable>(_ value: T) throws(ProtocolError) -> String {
        // JSONEncoder only ever produces UTF-8.
        String(decoding: try encode(value), as: UTF8.self)
    }

    static func protocolError(from error: DecodingError) -> ProtocolError {
        switch error {
        case .keyNotFound(let key, let context):
            return .missingField(codingPathString(context.codingPath + [key]))
        case .valueNotFound(_, let context):
            if context.codingPath.isEmpty { return .malformedJSON(reason: "the document is null") }
            return .missingField(codingPathString(context.codingPath))
        case .typeMismatch(let type, let context):
            let field = codingPathString(context.codingPath)
            if field.isEmpty { return .malformedJSON(reason: "expected \(jsonTypeName(type)) at the top level") }
            return .invalidValue(field: field, reason: "expected \(jsonTypeName(type))")
        case .dataCorrupted(let context):
            if context.codingPath.isEmpty {
                let underlying = (context.underlyingError as? NSError)?.userInfo[NSDebugDescriptionErrorKey] as? String
                return .malformedJSON(reason: underlying ?? context.debugDescription)
            }
            return .invalidValue(field: codingPathString(context.codingPath), reason: context.debugDescription)
        @unknown default:
            return .malformedJSON(reason: String(describing: error))
        }
    }

    static func codingPathString(_ path: [any CodingKey]) -> String {
        var text = ""
        for key in path {
            if let index = key.intValue {
                text += "[\(index)]"
            } else {
                text += text.isEmpty ? key.stringValue : "." + key.stringValue
            }
        }
        return text
    }

    private static func jsonTypeName(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is Bool.Type: "a boolean"
        case is Int.Type, is Double.Type: "a number"
        case is [String: String].Type: "an object of strings"
        default: "\(type)"
        }
    }
}

/// A closed set of string values: decoding anything else names the field and lists what is allowed.
public protocol WireEnum: RawRepresentable, CaseIterable, Codable, Sendable, Hashable where RawValue == String {}

extension WireEnum {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let raw = try container.decode(String.self)
        guard let value = Self(rawValue: raw) else {
            let allowed = Self.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "unknown value \"\(raw)\"; expected one of \(allowed)")
        }
        self = value
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}

extension KeyedDecodingContainer {
    /// Decodes a field whose value is a string holding JSON (AppRTC's `pc_config`, `messages`, `msg`),
    /// reporting errors inside it with the full path.
    func decodeEmbeddedJSON<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        let text = try decode(String.self, forKey: key)
        do {
            return try ECVJSON.decode(T.self, from: text)
        } catch {
            throw error.prefixed(by: ECVJSON.codingPathString(codingPath + [key]))
        }
    }

    /// Decodes a string that must not be empty; AppRTC ids and ECV rtcIds are never empty.
    func decodeNonEmptyString(forKey key: Key) throws -> String {
        let value = try decode(String.self, forKey: key)
        guard !value.isEmpty else {
            throw DecodingError.dataCorruptedError(forKey: key, in: self, debugDescription: "must not be empty")
        }
        return value
    }

    /// A string map that may be absent (meaning empty) but whose values must all be strings.
    func decodeStringMap(forKey key: Key) throws -> [String: String] {
        try decodeIfPresent([String: String].self, forKey: key) ?? [:]
    }
}

extension KeyedEncodingContainer {
    mutating func encodeEmbeddedJSON<T: Encodable>(_ value: T, forKey key: Key) throws {
        try encode(ECVJSON.encodeString(value), forKey: key)
    }
}
