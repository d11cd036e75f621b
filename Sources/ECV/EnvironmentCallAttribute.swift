import ECVProtocol
import Foundation

/// One attached-data field an environment declares, as the Danamon guide's demo app has it: the
/// create-call page turns each one into an input, and its value is sent as an entry of
/// `DialCallParameters.attributes` (the DialEx `Attributes`).
///
/// A `.select` attribute offers `values`, the first preselected; a `.text` one is free text
/// prefilled with `defaultValue`. The guide's own declarations compile unchanged:
///
/// ```swift
/// EnvironmentCallAttribute(key: "video_flow", displayName: "Video Flow", values: ["ETB", "NTB"])
/// EnvironmentCallAttribute(key: "NikNumber", displayName: "Nik Number (encrypted)", defaultValue: "…", type: "text")
/// ```
///
/// In JSON the fields keep those names; `type` (default `select`) and `values` (default none) may
/// be left out, and `label`, the name files written before the seed's names were adopted used,
/// is read as `displayName`. Decoding rejects an unknown `type` and a select without values,
/// naming the field.
public struct EnvironmentCallAttribute: Sendable, Hashable, Codable {
    /// How the value is asked for. The seed writes the type as a string (`type: "text"`), hence the
    /// string literals.
    public enum InputType: String, WireEnum, ExpressibleByStringLiteral {
        /// A dropdown of `values`; the first one is preselected.
        case select
        /// A text field prefilled with `defaultValue`.
        case text

        /// A literal is source code, so a misspelt one is a programmer error and stops the program
        /// the first time it runs, as `URL(string: "…")!` would. Data from outside goes through
        /// `init(from:)`, which throws an error naming the field instead.
        public init(stringLiteral value: String) {
            guard let type = Self(rawValue: value) else {
                preconditionFailure("EnvironmentCallAttribute type \"\(value)\" is neither \"select\" nor \"text\"")
            }
            self = type
        }
    }

    /// The attribute key sent to the backend.
    public var key: String
    /// The label the create-call page shows.
    public var displayName: String
    /// The choices of a `.select` attribute, the first preselected.
    public var values: [String]
    /// The prefilled value of a `.text` attribute.
    public var defaultValue: String?
    public var type: InputType

    public init(key: String, displayName: String, values: [String] = [], defaultValue: String? = nil, type: InputType = .select) {
        self.key = key
        self.displayName = displayName
        self.values = values
        self.defaultValue = defaultValue
        self.type = type
    }

    /// Fails for a declaration no caller could satisfy: an empty key, or a select with nothing to
    /// choose from. Decoding checks this; call it for declarations built in code from outside input.
    public func validate() throws(EnvironmentCallAttributeError) {
        if key.trimmingCharacters(in: .whitespaces).isEmpty { throw .emptyKey }
        if type == .select && values.isEmpty { throw .selectWithoutValues(key: key) }
    }

    /// The value this attribute sends, given the caller's choice (nil: none made): a select's
    /// choice must be one of `values`, and without one the first value is sent; a text attribute
    /// sends the choice or `defaultValue`, and nothing when it has neither.
    public func resolvedValue(choosing chosen: String?) throws(EnvironmentCallAttributeError) -> String? {
        try validate()
        switch type {
        case .select:
            guard let chosen else { return values.first }
            guard values.contains(chosen) else {
                throw .valueNotOffered(key: key, displayName: displayName, value: chosen, offered: values)
            }
            return chosen
        case .text:
            return chosen ?? defaultValue
        }
    }

    private enum CodingKeys: String, CodingKey {
        case key, displayName, values, defaultValue, type
        /// The old name of `displayName`, only read.
        case label
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        key = try container.decode(String.self, forKey: .key)
        if let displayName = try container.decodeIfPresent(String.self, forKey: .displayName) {
            self.displayName = displayName
        } else if let label = try container.decodeIfPresent(String.self, forKey: .label) {
            displayName = label
        } else {
            throw DecodingError.keyNotFound(CodingKeys.displayName, .init(codingPath: container.codingPath,
                                                                          debugDescription: "an attribute needs a displayName"))
        }
        values = try container.decodeIfPresent([String].self, forKey: .values) ?? []
        defaultValue = try container.decodeIfPresent(String.self, forKey: .defaultValue)
        type = try container.decodeIfPresent(InputType.self, forKey: .type) ?? .select
        do {
            try validate()
        } catch {
            let field: CodingKeys = if case .emptyKey = error { .key } else { .values }
            throw DecodingError.dataCorruptedError(forKey: field, in: container, debugDescription: error.description)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(key, forKey: .key)
        try container.encode(displayName, forKey: .displayName)
        try container.encode(type, forKey: .type)
        if !values.isEmpty { try container.encode(values, forKey: .values) }
        try container.encodeIfPresent(defaultValue, forKey: .defaultValue)
    }
}

extension Sequence where Element == EnvironmentCallAttribute {
    /// The first problem with these declarations taken together: an invalid one, or a key declared
    /// twice (the second would silently override the first on the create-call page).
    public func validate() throws(EnvironmentCallAttributeError) {
        var seen: Set<String> = []
        for attribute in self {
            try attribute.validate()
            guard seen.insert(attribute.key).inserted else { throw .duplicateKey(attribute.key) }
        }
    }

    /// `DialCallParameters.attributes` for a caller who chose `chosen`: every declared attribute
    /// resolved (`resolvedValue(choosing:)`); keys the environment does not declare pass through.
    public func dialAttributes(choosing chosen: [String: String]) throws(EnvironmentCallAttributeError) -> [String: String] {
        try validate()
        var attributes = chosen
        for attribute in self {
            attributes[attribute.key] = try attribute.resolvedValue(choosing: chosen[attribute.key])
        }
        return attributes
    }
}

/// Why declared call attributes, or a caller's choice among them, cannot be used.
public enum EnvironmentCallAttributeError: Error, Sendable, Equatable, CustomStringConvertible {
    case emptyKey
    /// A `.select` attribute with no values: there is nothing to preselect or choose.
    case selectWithoutValues(key: String)
    case duplicateKey(String)
    /// The caller chose a value a `.select` attribute does not offer.
    case valueNotOffered(key: String, displayName: String, value: String, offered: [String])

    public var description: String {
        switch self {
        case .emptyKey: "an attribute key must not be empty"
        case .selectWithoutValues(let key): "select attribute \(key) has no values to choose from"
        case .duplicateKey(let key): "attribute \(key) is declared twice"
        case .valueNotOffered(let key, let displayName, let value, let offered):
            "attribute \(key) (\(displayName)) must be one of \(offered.joined(separator: ", ")), not '\(value)'"
        }
    }
}
