import Foundation

/// Where things are in a JSON text, for errors a person editing the file can act on: Foundation's
/// `JSONDecoder` on Linux says neither where a syntax error is ("The given data was not valid
/// JSON.") nor on which line a field it rejected sits.
///
/// It is consulted only after decoding failed, so it accepts what Foundation accepts (a
/// byte-order mark, trailing commas, repeated keys) and is stricter nowhere it could matter
/// first: it stops at the first problem.
enum JSONTextLocator {
    /// 1-based; the column counts characters (Unicode scalars), as editors do.
    struct Position: Equatable, CustomStringConvertible {
        var line: Int
        var column: Int
        var description: String { "line \(line), column \(column)" }
    }

    struct SyntaxError: Error, Equatable {
        var position: Position
        var reason: String
    }

    /// Deeper nesting is refused rather than recursed into (a hostile file must not overflow the
    /// stack); Foundation's decoder refuses it too.
    static let maxDepth = 512

    /// The first syntax error, or nil for valid JSON.
    static func syntaxError(in data: Data) -> SyntaxError? {
        var scanner = Scanner(bytes: Array(data), target: [])
        do {
            try scanner.scanDocument()
            return nil
        } catch {
            return SyntaxError(position: position(atByte: error.offset, in: scanner.bytes), reason: error.reason)
        }
    }

    /// Where the value at `path` begins, the path written as `ProtocolError` writes it
    /// (`environments[1].callAttributes[0].type`; keys with `.` or `[` are not addressable). For a
    /// path the text does not have all of (a missing field), the deepest value on it that exists.
    static func position(ofPath path: String, in data: Data) -> Position? {
        let target = components(of: path)
        guard !target.isEmpty else { return nil }
        var scanner = Scanner(bytes: Array(data), target: target)
        // A syntax error after the value was found does not make its position wrong.
        try? scanner.scanDocument()
        return scanner.found.map { position(atByte: $0.offset, in: scanner.bytes) }
    }

    static func position(atByte offset: Int, in bytes: [UInt8]) -> Position {
        let end = min(offset, bytes.count)
        var line = 1, column = 1
        for byte in bytes[..<end] {
            if byte == UInt8(ascii: "\n") {
                line += 1
                column = 1
            } else if byte & 0xC0 != 0x80 {
                column += 1
            }
        }
        return Position(line: line, column: column)
    }

    enum Component: Equatable {
        case key(String)
        case index(Int)
    }

    static func components(of path: String) -> [Component] {
        var components: [Component] = []
        for segment in path.split(separator: ".", omittingEmptySubsequences: true) {
            let parts = segment.split(separator: "[", omittingEmptySubsequences: false)
            if let key = parts.first, !key.isEmpty { components.append(.key(String(key))) }
            for part in parts.dropFirst() {
                guard part.hasSuffix("]"), let index = Int(part.dropLast()) else { return components }
                components.append(.index(index))
            }
        }
        return components
    }

    /// A recursive-descent walk over the bytes that checks the grammar and notes where the
    /// values on `target` begin.
    private struct Scanner {
        struct Failure: Error {
            var offset: Int
            var reason: String
        }

        let bytes: [UInt8]
        let target: [Component]
        var offset = 0
        var path: [Component] = []
        /// The start of the deepest value found on `target` so far.
        var found: (offset: Int, depth: Int)?

        init(bytes: [UInt8], target: [Component]) {
            self.bytes = bytes
            self.target = target
        }

        mutating func scanDocument() throws(Failure) {
            if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { offset = 3 }
            try scanValue()
            skipWhitespace()
            guard offset == bytes.count else { throw failure("unexpected \(describeNext()) after the end of the document") }
        }

        private var next: UInt8? { offset < bytes.count ? bytes[offset] : nil }

        private func failure(_ reason: String) -> Failure { Failure(offset: offset, reason: reason) }

        private func describeNext() -> String {
            guard let next else { return "the end of the file" }
            let scalar = Unicode.Scalar(next)
            return next < 0x80 && next >= 0x20 ? "'\(Character(scalar))'" : String(format: "byte 0x%02X", next)
        }

        private mutating func skipWhitespace() {
            while let byte = next, byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 { offset += 1 }
        }

        private mutating func noteValueStart() {
            guard !target.isEmpty, path.count <= target.count, target.starts(with: path),
                  path.count > (found?.depth ?? -1) else { return }
            found = (offset, path.count)
        }

        private mutating func scanValue() throws(Failure) {
            skipWhitespace()
            noteValueStart()
            guard let next else { throw failure("expected a value, found the end of the file") }
            switch next {
            case UInt8(ascii: "{"): try scanObject()
            case UInt8(ascii: "["): try scanArray()
            case UInt8(ascii: "\""): _ = try scanString()
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): try scanNumber()
            case UInt8(ascii: "t"): try scanLiteral("true")
            case UInt8(ascii: "f"): try scanLiteral("false")
            case UInt8(ascii: "n"): try scanLiteral("null")
            default: throw failure("expected a value, found \(describeNext())")
            }
        }

        private mutating func enter() throws(Failure) {
            guard path.count < JSONTextLocator.maxDepth else { throw failure("nested deeper than \(JSONTextLocator.maxDepth) levels") }
            offset += 1
            skipWhitespace()
        }

        private mutating func scanObject() throws(Failure) {
            try enter()
            if next == UInt8(ascii: "}") { offset += 1; return }
            while true {
                guard next == UInt8(ascii: "\"") else { throw failure("expected a field name in double quotes, found \(describeNext())") }
                let key = try scanString()
                skipWhitespace()
                guard next == UInt8(ascii: ":") else { throw failure("expected ':' after the field name, found \(describeNext())") }
                offset += 1
                path.append(.key(key))
                try scanValue()
                path.removeLast()
                skipWhitespace()
                guard try continues(closingWith: "}") else { return }
            }
        }

        private mutating func scanArray() throws(Failure) {
            try enter()
            if next == UInt8(ascii: "]") { offset += 1; return }
            var index = 0
            while true {
                path.append(.index(index))
                try scanValue()
                path.removeLast()
                index += 1
                skipWhitespace()
                guard try continues(closingWith: "]") else { return }
            }
        }

        /// After a member: true when another follows (a comma), false at the closing bracket,
        /// which may come after a trailing comma.
        private mutating func continues(closingWith close: Unicode.Scalar) throws(Failure) -> Bool {
            if next == UInt8(ascii: close) { offset += 1; return false }
            guard next == UInt8(ascii: ",") else { throw failure("expected ',' or '\(close)', found \(describeNext())") }
            offset += 1
            skipWhitespace()
            if next == UInt8(ascii: close) { offset += 1; return false }
            return true
        }

        private mutating func scanString() throws(Failure) -> String {
            offset += 1
            var decoded: [UInt8] = []
            while true {
                guard let byte = next else { throw failure("a string is not closed before the end of the file") }
                switch byte {
                case UInt8(ascii: "\""):
                    offset += 1
                    return String(decoding: decoded, as: UTF8.self)
                case UInt8(ascii: "\\"):
                    offset += 1
                    try scanEscape(into: &decoded)
                case ..<0x20:
                    throw failure(byte == 0x0A ? "a string is not closed before the end of the line" : "a control character in a string")
                default:
                    decoded.append(byte)
                    offset += 1
                }
            }
        }

        private mutating func scanEscape(into decoded: inout [UInt8]) throws(Failure) {
            let simple: [UInt8: UInt8] = [0x22: 0x22, 0x5C: 0x5C, 0x2F: 0x2F, 0x62: 0x08, 0x66: 0x0C, 0x6E: 0x0A, 0x72: 0x0D, 0x74: 0x09]
            guard let byte = next else { throw failure("a string is not closed before the end of the file") }
            if let replacement = simple[byte] {
                decoded.append(replacement)
                offset += 1
                return
            }
            guard byte == UInt8(ascii: "u") else { throw failure("unknown escape '\\\(describeNext())' in a string") }
            offset += 1
            var value: UInt32 = 0
            for _ in 0..<4 {
                guard let digit = next.flatMap({ UInt32(String(UnicodeScalar($0)), radix: 16) }) else {
                    throw failure("\\u needs four hexadecimal digits")
                }
                value = value << 4 | digit
                offset += 1
            }
            // Keys are only compared, so a lone surrogate may stand in as U+FFFD.
            decoded.append(contentsOf: Array(String(Unicode.Scalar(value).map(Character.init) ?? "\u{FFFD}").utf8))
        }

        private mutating func scanNumber() throws(Failure) {
            if next == UInt8(ascii: "-") { offset += 1 }
            guard let first = next, first.isDigit else { throw failure("expected a digit, found \(describeNext())") }
            offset += 1
            if first == UInt8(ascii: "0"), let following = next, following.isDigit {
                throw failure("a number must not start with 0")
            }
            skipDigits()
            if next == UInt8(ascii: ".") {
                offset += 1
                guard next?.isDigit == true else { throw failure("expected a digit after '.', found \(describeNext())") }
                skipDigits()
            }
            if next == UInt8(ascii: "e") || next == UInt8(ascii: "E") {
                offset += 1
                if next == UInt8(ascii: "+") || next == UInt8(ascii: "-") { offset += 1 }
                guard next?.isDigit == true else { throw failure("expected a digit in the exponent, found \(describeNext())") }
                skipDigits()
            }
        }

        private mutating func skipDigits() {
            while next?.isDigit == true { offset += 1 }
        }

        private mutating func scanLiteral(_ literal: String) throws(Failure) {
            for expected in literal.utf8 {
                guard next == expected else { throw failure("expected '\(literal)'") }
                offset += 1
            }
        }
    }
}

private extension UInt8 {
    var isDigit: Bool { self >= UInt8(ascii: "0") && self <= UInt8(ascii: "9") }
}
