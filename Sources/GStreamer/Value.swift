/// A GLib/GStreamer value in Swift terms: what properties, signal arguments and structure fields hold.
///
/// Integers of every width read as `.int` / `.uint`; writing converts back to the exact type the
/// property or signal declares, with a range check.
package enum Value: Sendable, Equatable, CustomStringConvertible {
    case bool(Bool)
    case int(Int)
    case uint(UInt)
    case double(Double)
    case string(String?)
    case enumeration(EnumValue)
    case flags(FlagsValue)
    case fraction(numerator: Int, denominator: Int)
    case caps(Caps?)
    case structure(Structure?)
    case list([Value])
    case array([Value])
    case object(Object?)
    case bytes([UInt8])
    /// A value with no Swift counterpart here; `text` is GStreamer's serialisation when it has one.
    case other(typeName: String, text: String?)

    package var description: String {
        switch self {
        case .bool(let v): String(v)
        case .int(let v): String(v)
        case .uint(let v): String(v)
        case .double(let v): String(v)
        case .string(let v): v.map { "\"\($0)\"" } ?? "NULL"
        case .enumeration(let v): v.nick
        case .flags(let v): v.nicks.joined(separator: "+")
        case .fraction(let n, let d): "\(n)/\(d)"
        case .caps(let v): v?.description ?? "NULL"
        case .structure(let v): v?.description ?? "NULL"
        case .list(let v): "{ " + v.map(\.description).joined(separator: ", ") + " }"
        case .array(let v): "< " + v.map(\.description).joined(separator: ", ") + " >"
        case .object(let v): v?.description ?? "NULL"
        case .bytes(let v): "<\(v.count) bytes>"
        case .other(let type, let text): text ?? "<\(type)>"
        }
    }

    /// A short name for the kind of value, for error messages.
    var kindName: String {
        switch self {
        case .bool: "a boolean"
        case .int, .uint: "an integer"
        case .double: "a floating-point number"
        case .string: "a string"
        case .enumeration: "an enum value"
        case .flags: "flags"
        case .fraction: "a fraction"
        case .caps: "caps"
        case .structure: "a structure"
        case .list: "a list"
        case .array: "an array"
        case .object: "an object"
        case .bytes: "bytes"
        case .other(let type, _): type
        }
    }

    package var boolValue: Bool? { if case .bool(let v) = self { v } else { nil } }
    package var intValue: Int? {
        switch self {
        case .int(let v): v
        case .uint(let v): Int(exactly: v)
        case .enumeration(let v): v.value
        default: nil
        }
    }
    package var uintValue: UInt? {
        switch self {
        case .uint(let v): v
        case .int(let v): UInt(exactly: v)
        default: nil
        }
    }
    package var doubleValue: Double? {
        switch self {
        case .double(let v): v
        case .int(let v): Double(v)
        case .uint(let v): Double(v)
        default: nil
        }
    }
    package var stringValue: String? {
        switch self {
        case .string(let v): v
        case .enumeration(let v): v.nick
        default: nil
        }
    }
    package var structureValue: Structure? { if case .structure(let v) = self { v } else { nil } }
    package var capsValue: Caps? { if case .caps(let v) = self { v } else { nil } }
    package var objectValue: Object? { if case .object(let v) = self { v } else { nil } }
    package var listValue: [Value]? {
        switch self {
        case .list(let v), .array(let v): v
        default: nil
        }
    }
}

/// One value of a GEnum: its nick ("cbr"), numeric value and the enum's type name.
package struct EnumValue: Sendable, Hashable {
    package var nick: String
    package var value: Int
    package var typeName: String
}

/// A set of GFlags: the nicks of the bits set, the raw value and the flags type name.
package struct FlagsValue: Sendable, Hashable {
    package var nicks: [String]
    package var value: UInt
    package var typeName: String
}

/// A Swift value that can be stored in a property or passed to a signal.
package protocol ValueConvertible: Sendable {
    var gstValue: Value { get }
}

extension Bool: ValueConvertible { package var gstValue: Value { .bool(self) } }
extension Int: ValueConvertible { package var gstValue: Value { .int(self) } }
extension Int32: ValueConvertible { package var gstValue: Value { .int(Int(self)) } }
extension Int64: ValueConvertible { package var gstValue: Value { .int(Int(self)) } }
extension UInt: ValueConvertible { package var gstValue: Value { .uint(self) } }
extension UInt32: ValueConvertible { package var gstValue: Value { .uint(UInt(self)) } }
extension UInt64: ValueConvertible { package var gstValue: Value { .uint(UInt(self)) } }
extension Double: ValueConvertible { package var gstValue: Value { .double(self) } }
extension Float: ValueConvertible { package var gstValue: Value { .double(Double(self)) } }
extension String: ValueConvertible { package var gstValue: Value { .string(self) } }
extension Caps: ValueConvertible { package var gstValue: Value { .caps(self) } }
extension Structure: ValueConvertible { package var gstValue: Value { .structure(self) } }
extension Value: ValueConvertible { package var gstValue: Value { self } }
extension Object: ValueConvertible { package var gstValue: Value { .object(self) } }
