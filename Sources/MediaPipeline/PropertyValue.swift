/// A typed element property value, free of any GStreamer type so the graph stays pure Swift.
///
/// The runtime maps each case onto the property's GType: `bool`/`int`/`uint`/`double`/`string`
/// directly, `fraction` as a GstFraction, `caps` and `structure` by parsing the text, and
/// `enumNick`/`serialized` by deserialising the text against the property's own pspec
/// (`gst_value_deserialize_with_pspec`, exposed by the binding as `set(_:fromString:)`).
public enum PropertyValue: Sendable, Hashable {
    case bool(Bool)
    case int(Int)
    case uint(UInt)
    case double(Double)
    case string(String)
    /// An enum nick ("cbr", "15-bit") or a flags expression ("zerolatency", "a+b").
    case enumNick(String)
    /// Caps in their string form, e.g. `video/x-raw,width=480`.
    case caps(String)
    case fraction(numerator: Int, denominator: Int)
    /// A GstStructure in its string form, e.g. `controls,video_bitrate=800000` (v4l2 `extra-controls`).
    case structure(String)
    /// Text from a user preset whose type only the element knows; deserialised by property type.
    case serialized(String)

    /// The value as gst-launch-1.0 accepts it after `name=`, quoted only when it must be.
    public var launchText: String {
        switch self {
        case .bool(let value): return value ? "true" : "false"
        case .int(let value): return String(value)
        case .uint(let value): return String(value)
        case .double(let value): return Self.decimal(value)
        case .string(let text), .enumNick(let text), .serialized(let text): return LaunchQuoting.quotedIfNeeded(text)
        case .caps(let text), .structure(let text): return LaunchQuoting.quoted(text)
        case .fraction(let numerator, let denominator): return "\(numerator)/\(denominator)"
        }
    }

    /// Locale-independent and always with a decimal point, so gst-launch parses it as a double.
    private static func decimal(_ value: Double) -> String {
        let text = String(value)
        return text.contains(".") || text.contains("e") || text.contains("n") ? text : text + ".0"
    }
}

/// One named property of a node, kept in the order the compiler set it, so renderings are
/// deterministic and the runtime applies properties in the same order gst-launch would.
public struct NodeProperty: Sendable, Hashable {
    public var name: String
    public var value: PropertyValue

    public init(_ name: String, _ value: PropertyValue) {
        self.name = name
        self.value = value
    }
}

/// gst-launch quoting: double quotes with backslash escapes, which both the shell (in
/// `eval gst-launch-1.0 …`) and `gst_parse_launch` read back to the same text.
enum LaunchQuoting {
    static func quotedIfNeeded(_ text: String) -> String {
        let plain = !text.isEmpty && text.unicodeScalars.allSatisfy { scalar in
            (scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar)))
                || "_.:/+-".unicodeScalars.contains(scalar)
        }
        return plain ? text : quoted(text)
    }

    /// Escapes scalar by scalar: a backslash or quote followed by a combining mark is one Character
    /// in Swift but two to gst-launch and the shell.
    static func quoted(_ text: String) -> String {
        var escaped = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            if scalar == "\"" || scalar == "\\" { escaped.append("\\") }
            escaped.append(scalar)
        }
        return "\"" + String(escaped) + "\""
    }
}
