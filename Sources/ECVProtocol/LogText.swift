/// Text from outside (names, reasons, attributes, error messages) made safe for one log line:
/// control characters, line and paragraph separators and bidi overrides are escaped (`\n`,
/// `\u{202E}`), so nobody can forge a second line or make a line read differently; and the line
/// is cut at `limit` bytes, saying how much was dropped, so nobody can write megabytes into it.
public enum LogText {
    public static let defaultLimit = 2048

    public static func sanitized(_ text: String, limit: Int = defaultLimit) -> String {
        var output = ""
        var bytes = 0
        var index = text.unicodeScalars.startIndex
        let scalars = text.unicodeScalars
        while index < scalars.endIndex {
            let scalar = scalars[index]
            let piece = escaped(scalar)
            if bytes + piece.utf8.count > limit {
                let rest = String(scalars[index...]).utf8.count
                return output + "… (\(rest) more bytes)"
            }
            output += piece
            bytes += piece.utf8.count
            index = scalars.index(after: index)
        }
        return output
    }

    static func escaped(_ scalar: Unicode.Scalar) -> String {
        switch scalar {
        case "\n": return "\\n"
        case "\r": return "\\r"
        case "\t": return "\\t"
        default:
            let special = scalar.properties.generalCategory == .control
                || (0x2028...0x2029).contains(scalar.value) || (0x202A...0x202E).contains(scalar.value)
                || (0x2066...0x2069).contains(scalar.value)
            return special ? "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}" : String(scalar)
        }
    }
}
