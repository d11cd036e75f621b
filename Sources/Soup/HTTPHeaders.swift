/// One header line as it travels on the wire.
public struct HTTPHeaderField: Sendable, Hashable {
    public var name: String
    public var value: String

    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }
}

/// HTTP headers in the order they were added, with case-insensitive lookup.
///
/// Order matters to servers that sign or log requests, and a name may repeat (`Set-Cookie`), so
/// this is a list, not a dictionary. A dictionary literal keeps its written order.
public struct HTTPHeaders: Sendable, Hashable, Sequence, ExpressibleByDictionaryLiteral, CustomStringConvertible {
    public private(set) var fields: [HTTPHeaderField]

    public init() { fields = [] }

    public init(_ fields: [HTTPHeaderField]) { self.fields = fields }

    public init(dictionaryLiteral elements: (String, String)...) {
        fields = elements.map { HTTPHeaderField(name: $0.0, value: $0.1) }
    }

    /// Headers from a dictionary. A dictionary has no order, so names are sorted to keep requests
    /// reproducible.
    public init(_ dictionary: [String: String]) {
        fields = dictionary.sorted { $0.key < $1.key }.map { HTTPHeaderField(name: $0.key, value: $0.value) }
    }

    /// The first value for `name` (case-insensitive). Setting replaces every value; `nil` removes them.
    public subscript(name: String) -> String? {
        get { fields.first { $0.name.caseInsensitiveEquals(name) }?.value }
        set {
            let position = fields.firstIndex { $0.name.caseInsensitiveEquals(name) } ?? fields.count
            remove(name)
            guard let newValue else { return }
            fields.insert(HTTPHeaderField(name: name, value: newValue), at: Swift.min(position, fields.count))
        }
    }

    /// Every value for `name` (case-insensitive), in order.
    public func values(for name: String) -> [String] {
        fields.filter { $0.name.caseInsensitiveEquals(name) }.map(\.value)
    }

    public func contains(_ name: String) -> Bool { fields.contains { $0.name.caseInsensitiveEquals(name) } }

    /// Adds a line, keeping any earlier lines with the same name.
    public mutating func add(_ name: String, _ value: String) {
        fields.append(HTTPHeaderField(name: name, value: value))
    }

    public mutating func remove(_ name: String) {
        fields.removeAll { $0.name.caseInsensitiveEquals(name) }
    }

    /// Merges `other` over these headers: its names replace ours.
    public func merging(_ other: HTTPHeaders) -> HTTPHeaders {
        var result = self
        for name in Set(other.fields.map { $0.name.lowercased() }) { result.remove(name) }
        result.fields.append(contentsOf: other.fields)
        return result
    }

    /// Last value wins per lower-cased name; for callers that want plain lookups.
    public var dictionary: [String: String] {
        var result: [String: String] = [:]
        for field in fields { result[field.name.lowercased()] = field.value }
        return result
    }

    public var count: Int { fields.count }
    public var isEmpty: Bool { fields.isEmpty }

    public func makeIterator() -> IndexingIterator<[HTTPHeaderField]> { fields.makeIterator() }

    public var description: String {
        fields.map { "\($0.name): \($0.value)" }.joined(separator: "\n")
    }

    /// Why these headers cannot be sent, or nil when they can: names must be RFC 9110 tokens and
    /// values must not contain line breaks (header injection) or NUL.
    func validationProblem() -> String? {
        for field in fields {
            if field.name.isEmpty || !field.name.utf8.allSatisfy(isTokenByte) {
                return "header name \"\(field.name)\" is not a valid HTTP token"
            }
            if field.value.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0 }) {
                return "header \(field.name) contains a line break or NUL"
            }
        }
        return nil
    }
}

/// RFC 9110 `tchar`: the bytes allowed in methods and header names.
func isTokenByte(_ byte: UInt8) -> Bool {
    switch byte {
    case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
        return true
    default:
        return "!#$%&'*+-.^_`|~".utf8.contains(byte)
    }
}

extension String {
    func caseInsensitiveEquals(_ other: String) -> Bool {
        utf8.count == other.utf8.count && lowercased() == other.lowercased()
    }
}
