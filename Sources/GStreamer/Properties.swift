internal import CGLibShims
internal import CGStreamer
internal import CGStreamerShims

/// Typed GObject properties.
extension Object {
    /// Sets a property, converting the Swift value to the property's declared type.
    /// Throws for an unknown property, a read-only one, a value of the wrong type or out of range.
    package func set(_ property: String, _ value: some ValueConvertible) throws(GStreamerError) {
        let spec = try paramSpec(property)
        let flags = spec.pointee.flags.rawValue
        guard flags & G_PARAM_WRITABLE.rawValue != 0, flags & G_PARAM_CONSTRUCT_ONLY.rawValue == 0 else {
            throw .propertyNotWritable(object: diagnosticName, property: property)
        }
        let swiftValue = value.gstValue
        try withGValue(of: spec.pointee.value_type) { gvalue throws(GStreamerError) in
            do throws(GValueConversion.Failure) {
                try GValueConversion.store(swiftValue, into: gvalue)
            } catch {
                throw mapFailure(error, property: property, spec: spec, value: swiftValue)
            }
            if g_param_value_validate(spec, gvalue) != 0 {
                throw .valueOutOfRange(object: diagnosticName, property: property, value: swiftValue.description,
                                       range: Self.rangeDescription(spec))
            }
            g_object_set_property(gobject, property, gvalue)
        }
    }

    /// Sets a property from its gst-launch text form ("cbr", "800000", "video/x-raw"), as presets do.
    package func set(_ property: String, fromString text: String) throws(GStreamerError) {
        let spec = try paramSpec(property)
        guard spec.pointee.flags.rawValue & G_PARAM_WRITABLE.rawValue != 0 else {
            throw .propertyNotWritable(object: diagnosticName, property: property)
        }
        try withGValue(of: spec.pointee.value_type) { gvalue throws(GStreamerError) in
            guard gst_value_deserialize_with_pspec(gvalue, text, spec) != 0 else {
                throw .wrongPropertyType(object: diagnosticName, property: property,
                                         expected: String(cString: g_type_name(spec.pointee.value_type)), got: "'\(text)'")
            }
            g_object_set_property(gobject, property, gvalue)
        }
    }

    /// Reads a property as a Swift `Value`.
    package func get(_ property: String) throws(GStreamerError) -> Value {
        let spec = try paramSpec(property)
        guard spec.pointee.flags.rawValue & G_PARAM_READABLE.rawValue != 0 else {
            throw .propertyNotReadable(object: diagnosticName, property: property)
        }
        return withGValue(of: spec.pointee.value_type) { gvalue in
            g_object_get_property(gobject, property, gvalue)
            return GValueConversion.read(gvalue)
        }
    }

    /// True when the object has a property of that name.
    package func hasProperty(_ property: String) -> Bool {
        g_object_class_find_property(objectClass, property) != nil
    }

    /// The names of every property of the object's class.
    package var propertyNames: [String] {
        var count: guint = 0
        guard let specs = g_object_class_list_properties(objectClass, &count) else { return [] }
        defer { g_free(specs) }
        return (0..<Int(count)).compactMap { specs[$0].map { String(cString: $0.pointee.name) } }
    }

    var objectClass: UnsafeMutablePointer<GObjectClass> {
        UnsafeMutableRawPointer(gobject.pointee.g_type_instance.g_class!).assumingMemoryBound(to: GObjectClass.self)
    }

    func paramSpec(_ property: String) throws(GStreamerError) -> UnsafeMutablePointer<GParamSpec> {
        guard let spec = g_object_class_find_property(objectClass, property) else {
            throw .unknownProperty(object: diagnosticName, property: property)
        }
        return spec
    }

    private func mapFailure(_ failure: GValueConversion.Failure, property: String,
                            spec: UnsafeMutablePointer<GParamSpec>, value: Value) -> GStreamerError {
        switch failure {
        case .wrongType(let expected):
            .wrongPropertyType(object: diagnosticName, property: property, expected: expected, got: "\(value.kindName) (\(value))")
        case .outOfRange:
            .valueOutOfRange(object: diagnosticName, property: property, value: value.description, range: Self.rangeDescription(spec))
        case .unknownNick(let allowed):
            .unknownEnumValue(object: diagnosticName, property: property, value: value.description, allowed: allowed)
        }
    }

    /// "min...max" for numeric param specs, read from the spec's own structure.
    static func rangeDescription(_ spec: UnsafeMutablePointer<GParamSpec>) -> String {
        let raw = UnsafeMutableRawPointer(spec)
        switch g_type_fundamental(spec.pointee.value_type) {
        case ecv_type_int():
            let s = raw.assumingMemoryBound(to: GParamSpecInt.self).pointee; return "\(s.minimum)...\(s.maximum)"
        case ecv_type_uint():
            let s = raw.assumingMemoryBound(to: GParamSpecUInt.self).pointee; return "\(s.minimum)...\(s.maximum)"
        case ecv_type_int64():
            let s = raw.assumingMemoryBound(to: GParamSpecInt64.self).pointee; return "\(s.minimum)...\(s.maximum)"
        case ecv_type_uint64():
            let s = raw.assumingMemoryBound(to: GParamSpecUInt64.self).pointee; return "\(s.minimum)...\(s.maximum)"
        case ecv_type_long():
            let s = raw.assumingMemoryBound(to: GParamSpecLong.self).pointee; return "\(s.minimum)...\(s.maximum)"
        case ecv_type_ulong():
            let s = raw.assumingMemoryBound(to: GParamSpecULong.self).pointee; return "\(s.minimum)...\(s.maximum)"
        case ecv_type_double():
            let s = raw.assumingMemoryBound(to: GParamSpecDouble.self).pointee; return "\(s.minimum)...\(s.maximum)"
        case ecv_type_float():
            let s = raw.assumingMemoryBound(to: GParamSpecFloat.self).pointee; return "\(s.minimum)...\(s.maximum)"
        default:
            return "the values \(String(cString: g_type_name(spec.pointee.value_type))) accepts"
        }
    }
}
