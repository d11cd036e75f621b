internal import CGLibShims
internal import CGStreamer
internal import CGStreamerShims
import Foundation

/// Conversions between `Value` and GLib's `GValue`, in one place.
///
/// Every GValue this file initialises is either handed to GStreamer with ownership
/// (`gst_structure_take_value`) or unset by the caller through `withGValue`.
enum GValueConversion {
    enum Failure: Error, Equatable {
        case wrongType(expected: String)
        case outOfRange(range: String)
        case unknownNick(allowed: [String])
    }

    // MARK: GValue -> Value

    static func read(_ value: UnsafePointer<GValue>) -> Value {
        let type = value.pointee.g_type
        if type == ecv_type_fraction() {
            return .fraction(numerator: Int(gst_value_get_fraction_numerator(value)),
                             denominator: Int(gst_value_get_fraction_denominator(value)))
        }
        if type == ecv_type_value_list() {
            return .list((0..<gst_value_list_get_size(value)).map { read(gst_value_list_get_value(value, $0)) })
        }
        if type == ecv_type_value_array() {
            return .array((0..<gst_value_array_get_size(value)).map { read(gst_value_array_get_value(value, $0)) })
        }
        switch g_type_fundamental(type) {
        case ecv_type_boolean(): return .bool(g_value_get_boolean(value) != 0)
        case ecv_type_char(): return .int(Int(g_value_get_schar(value)))
        case ecv_type_uchar(): return .uint(UInt(g_value_get_uchar(value)))
        case ecv_type_int(): return .int(Int(g_value_get_int(value)))
        case ecv_type_uint(): return .uint(UInt(g_value_get_uint(value)))
        case ecv_type_long(): return .int(Int(g_value_get_long(value)))
        case ecv_type_ulong(): return .uint(UInt(g_value_get_ulong(value)))
        case ecv_type_int64(): return .int(Int(g_value_get_int64(value)))
        case ecv_type_uint64(): return .uint(UInt(g_value_get_uint64(value)))
        case ecv_type_float(): return .double(Double(g_value_get_float(value)))
        case ecv_type_double(): return .double(g_value_get_double(value))
        case ecv_type_string(): return .string(g_value_get_string(value).map { String(cString: $0) })
        case ecv_type_enum(): return .enumeration(enumValue(type: type, value: Int(g_value_get_enum(value))))
        case ecv_type_flags(): return .flags(flagsValue(type: type, value: UInt(g_value_get_flags(value))))
        case ecv_type_object():
            return .object(g_value_get_object(value).map { Object.wrap($0, .borrowed) })
        case ecv_type_boxed():
            if type == ecv_type_caps() {
                return .caps(g_value_get_boxed(value).map { Caps(borrowing: $0.assumingMemoryBound(to: GstCaps.self)) })
            }
            if type == ecv_type_structure() {
                return .structure(g_value_get_boxed(value).map { Structure(reading: $0.assumingMemoryBound(to: GstStructure.self)) })
            }
            if type == ecv_type_bytes(), let bytes = g_value_get_boxed(value) {
                return .bytes(copyBytes(OpaquePointer(bytes)))
            }
            if type == g_error_get_type(), let error = g_value_get_boxed(value) {
                return .string(error.assumingMemoryBound(to: GError.self).pointee.message.map { String(cString: $0) })
            }
            if type == ecv_type_strv(), let strv = g_value_get_boxed(value) {
                return .array(stringArray(strv.assumingMemoryBound(to: UnsafeMutablePointer<CChar>?.self)).map { .string($0) })
            }
            return other(value)
        default:
            return other(value)
        }
    }

    private static func other(_ value: UnsafePointer<GValue>) -> Value {
        let typeName = String(cString: g_type_name(value.pointee.g_type))
        guard let text = gst_value_serialize(value) else { return .other(typeName: typeName, text: nil) }
        defer { g_free(text) }
        return .other(typeName: typeName, text: String(cString: text))
    }

    static func copyBytes(_ bytes: OpaquePointer) -> [UInt8] {
        var size: gsize = 0
        guard let data = g_bytes_get_data(bytes, &size), size > 0 else { return [] }
        return Array(UnsafeRawBufferPointer(start: data, count: Int(size)))
    }

    private static func stringArray(_ strv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> [String] {
        var result: [String] = []
        var cursor = strv
        while let item = cursor.pointee { result.append(String(cString: item)); cursor += 1 }
        return result
    }

    static func enumValue(type: GType, value: Int) -> EnumValue {
        let typeName = String(cString: g_type_name(type))
        guard let cls = g_type_class_ref(type) else { return EnumValue(nick: String(value), value: value, typeName: typeName) }
        defer { g_type_class_unref(cls) }
        let enumClass = cls.assumingMemoryBound(to: GEnumClass.self)
        let nick = g_enum_get_value(enumClass, gint(value)).map { String(cString: $0.pointee.value_nick) } ?? String(value)
        return EnumValue(nick: nick, value: value, typeName: typeName)
    }

    static func flagsValue(type: GType, value: UInt) -> FlagsValue {
        let typeName = String(cString: g_type_name(type))
        var nicks: [String] = []
        if let cls = g_type_class_ref(type) {
            defer { g_type_class_unref(cls) }
            let flagsClass = cls.assumingMemoryBound(to: GFlagsClass.self).pointee
            for index in 0..<Int(flagsClass.n_values) {
                let entry = flagsClass.values[index]
                if entry.value != 0, UInt(entry.value) & value == UInt(entry.value) {
                    nicks.append(String(cString: entry.value_nick))
                }
            }
        }
        return FlagsValue(nicks: nicks, value: value, typeName: typeName)
    }

    /// Every nick of an enum or flags type, for error messages.
    static func nicks(of type: GType) -> [String] {
        guard let cls = g_type_class_ref(type) else { return [] }
        defer { g_type_class_unref(cls) }
        if g_type_fundamental(type) == ecv_type_enum() {
            let enumClass = cls.assumingMemoryBound(to: GEnumClass.self).pointee
            return (0..<Int(enumClass.n_values)).map { String(cString: enumClass.values[$0].value_nick) }
        }
        let flagsClass = cls.assumingMemoryBound(to: GFlagsClass.self).pointee
        return (0..<Int(flagsClass.n_values)).map { String(cString: flagsClass.values[$0].value_nick) }
    }

    // MARK: Value -> GValue

    /// Stores `value` into `gvalue`, which is already initialised to the type the receiver declares.
    static func store(_ value: Value, into gvalue: UnsafeMutablePointer<GValue>) throws(Failure) {
        let type = gvalue.pointee.g_type
        let typeName = String(cString: g_type_name(type))
        if type == ecv_type_fraction() {
            guard case .fraction(let n, let d) = value, let num = gint(exactly: n), let den = gint(exactly: d), den != 0 else {
                throw .wrongType(expected: "a fraction")
            }
            gst_value_set_fraction(gvalue, num, den)
            return
        }
        if type == ecv_type_value_list() || type == ecv_type_value_array() {
            guard let items = value.listValue else { throw .wrongType(expected: "a list") }
            for item in items {
                var element = try makeNatural(item)
                if type == ecv_type_value_list() { gst_value_list_append_and_take_value(gvalue, &element) }
                else { gst_value_array_append_and_take_value(gvalue, &element) }
            }
            return
        }
        switch g_type_fundamental(type) {
        case ecv_type_boolean():
            guard case .bool(let b) = value else { throw .wrongType(expected: "a boolean") }
            g_value_set_boolean(gvalue, b ? 1 : 0)
        case ecv_type_char(): g_value_set_schar(gvalue, try integer(value, Int8.self))
        case ecv_type_uchar(): g_value_set_uchar(gvalue, try integer(value, UInt8.self))
        case ecv_type_int(): g_value_set_int(gvalue, try integer(value, Int32.self))
        case ecv_type_uint(): g_value_set_uint(gvalue, try integer(value, UInt32.self))
        case ecv_type_long(): g_value_set_long(gvalue, try integer(value, Int.self))
        case ecv_type_ulong(): g_value_set_ulong(gvalue, try integer(value, UInt.self))
        case ecv_type_int64(): g_value_set_int64(gvalue, gint64(try integer(value, Int64.self)))
        case ecv_type_uint64(): g_value_set_uint64(gvalue, guint64(try integer(value, UInt64.self)))
        case ecv_type_float():
            guard let d = value.doubleValue else { throw .wrongType(expected: "a number") }
            g_value_set_float(gvalue, Float(d))
        case ecv_type_double():
            guard let d = value.doubleValue else { throw .wrongType(expected: "a number") }
            g_value_set_double(gvalue, d)
        case ecv_type_string():
            guard case .string(let s) = value else { throw .wrongType(expected: "a string") }
            g_value_set_string(gvalue, s)
        case ecv_type_enum():
            g_value_set_enum(gvalue, gint(try enumNumber(value, type: type)))
        case ecv_type_flags():
            g_value_set_flags(gvalue, guint(try flagsNumber(value, type: type)))
        case ecv_type_object():
            guard case .object(let object) = value else { throw .wrongType(expected: "an object of type \(typeName)") }
            if let object, g_type_is_a(object.gtype, type) == 0 {
                throw .wrongType(expected: "an object of type \(typeName)")
            }
            g_value_set_object(gvalue, object?.raw)
        case ecv_type_boxed():
            try storeBoxed(value, into: gvalue, type: type, typeName: typeName)
        default:
            throw .wrongType(expected: typeName)
        }
    }

    private static func storeBoxed(_ value: Value, into gvalue: UnsafeMutablePointer<GValue>, type: GType, typeName: String) throws(Failure) {
        if type == ecv_type_caps() {
            let caps: Caps?
            switch value {
            case .caps(let c): caps = c
            case .string(let text?):
                do { caps = try Caps(text) } catch { throw .wrongType(expected: "caps") }
            default: throw .wrongType(expected: "caps")
            }
            g_value_set_boxed(gvalue, caps?.pointer)
        } else if type == ecv_type_structure() {
            let structure: Structure?
            switch value {
            case .structure(let s): structure = s
            case .string(let text?):
                do { structure = try Structure(parsing: text) } catch { throw .wrongType(expected: "a structure") }
            default: throw .wrongType(expected: "a structure")
            }
            guard let structure else { g_value_set_boxed(gvalue, nil); return }
            do { g_value_take_boxed(gvalue, try structure.makeNative()) } catch { throw .wrongType(expected: "a structure") }
        } else if type == ecv_type_bytes() {
            guard case .bytes(let bytes) = value else { throw .wrongType(expected: "bytes") }
            let native = bytes.withUnsafeBytes { g_bytes_new($0.baseAddress, gsize($0.count)) }
            g_value_take_boxed(gvalue, native.map { UnsafeRawPointer($0) })
        } else {
            throw .wrongType(expected: typeName)
        }
    }

    private static func integer<T: FixedWidthInteger>(_ value: Value, _: T.Type) throws(Failure) -> T {
        let converted: T?
        switch value {
        case .int(let v): converted = T(exactly: v)
        case .uint(let v): converted = T(exactly: v)
        default: throw .wrongType(expected: "an integer")
        }
        guard let converted else { throw .outOfRange(range: "\(T.min)...\(T.max)") }
        return converted
    }

    private static func enumNumber(_ value: Value, type: GType) throws(Failure) -> Int {
        guard let cls = g_type_class_ref(type) else { throw .wrongType(expected: "an enum value") }
        defer { g_type_class_unref(cls) }
        let enumClass = cls.assumingMemoryBound(to: GEnumClass.self)
        switch value {
        case .enumeration(let e): return e.value
        case .string(let text?):
            if let entry = g_enum_get_value_by_nick(enumClass, text) ?? g_enum_get_value_by_name(enumClass, text) {
                return Int(entry.pointee.value)
            }
            throw .unknownNick(allowed: nicks(of: type))
        case .int(let number):
            guard let n = gint(exactly: number), g_enum_get_value(enumClass, n) != nil else {
                throw .unknownNick(allowed: nicks(of: type))
            }
            return number
        default:
            throw .wrongType(expected: "one of \(nicks(of: type).joined(separator: ", "))")
        }
    }

    private static func flagsNumber(_ value: Value, type: GType) throws(Failure) -> UInt {
        guard let cls = g_type_class_ref(type) else { throw .wrongType(expected: "flags") }
        defer { g_type_class_unref(cls) }
        let flagsClass = cls.assumingMemoryBound(to: GFlagsClass.self)
        switch value {
        case .flags(let f): return f.value
        case .uint(let v): return v
        case .int(let v) where v >= 0: return UInt(v)
        case .string(let text?):
            var result: UInt = 0
            for part in text.split(whereSeparator: { $0 == "+" || $0 == "|" }) {
                let name = part.trimmingCharacters(in: .whitespaces)
                guard let entry = g_flags_get_value_by_nick(flagsClass, name) ?? g_flags_get_value_by_name(flagsClass, name) else {
                    throw .unknownNick(allowed: nicks(of: type))
                }
                result |= UInt(entry.pointee.value)
            }
            return result
        default:
            throw .wrongType(expected: "flags (\(nicks(of: type).joined(separator: "+")))")
        }
    }

    /// A GValue of the type a Swift value maps to naturally (for structure fields and lists).
    static func makeNatural(_ value: Value) throws(Failure) -> GValue {
        var gvalue = GValue()
        let type: GType
        switch value {
        case .bool: type = ecv_type_boolean()
        case .int(let v): type = Int32(exactly: v) != nil ? ecv_type_int() : ecv_type_int64()
        case .uint(let v): type = UInt32(exactly: v) != nil ? ecv_type_uint() : ecv_type_uint64()
        case .double: type = ecv_type_double()
        case .string: type = ecv_type_string()
        case .enumeration(let e): type = g_type_from_name(e.typeName)
        case .flags(let f): type = g_type_from_name(f.typeName)
        case .fraction: type = ecv_type_fraction()
        case .caps: type = ecv_type_caps()
        case .structure: type = ecv_type_structure()
        case .list: type = ecv_type_value_list()
        case .array: type = ecv_type_value_array()
        case .object(let o): type = o?.gtype ?? ecv_type_object()
        case .bytes: type = ecv_type_bytes()
        case .other(let typeName, _): throw .wrongType(expected: "a value with a Swift form, not \(typeName)")
        }
        guard type != 0 else { throw .wrongType(expected: "a registered type") }
        g_value_init(&gvalue, type)
        do {
            try store(value, into: &gvalue)
        } catch {
            g_value_unset(&gvalue)
            throw error
        }
        return gvalue
    }
}

/// Runs `body` with a GValue initialised to `type`, and unsets it afterwards whatever happens.
func withGValue<R, E: Error>(of type: GType, _ body: (UnsafeMutablePointer<GValue>) throws(E) -> R) throws(E) -> R {
    var gvalue = GValue()
    g_value_init(&gvalue, type)
    defer { g_value_unset(&gvalue) }
    return try body(&gvalue)
}
