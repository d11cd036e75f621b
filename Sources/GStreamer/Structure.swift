internal import CGStreamer

/// A named set of typed fields: GStreamer's `GstStructure` as a Swift value.
///
/// Structures come out of caps, bus messages and webrtcbin's stats; reading them converts every
/// field once, so the result is an ordinary Sendable value with no C lifetime attached.
package struct Structure: Sendable, Equatable, CustomStringConvertible {
    package struct Field: Sendable, Equatable {
        package var name: String
        package var value: Value
    }

    package var name: String
    package private(set) var fields: [Field]

    package init(name: String, fields: [(String, any ValueConvertible)] = []) {
        self.name = name
        self.fields = fields.map { Field(name: $0.0, value: $0.1.gstValue) }
    }

    /// Parses GStreamer's text form, e.g. `application/x-rtp, media=(string)video`.
    package init(parsing text: String) throws(GStreamerError) {
        GStreamerRuntime.require()
        guard let parsed = gst_structure_from_string(text, nil) else {
            throw .notSupported("cannot parse structure '\(text)'")
        }
        defer { gst_structure_free(parsed) }
        self.init(reading: parsed)
    }

    init(reading structure: UnsafePointer<GstStructure>) {
        name = String(cString: gst_structure_get_name(structure))
        fields = (0..<max(0, gst_structure_n_fields(structure))).compactMap { index in
            guard let fieldName = gst_structure_nth_field_name(structure, guint(index)),
                  let value = gst_structure_get_value(structure, fieldName) else { return nil }
            return Field(name: String(cString: fieldName), value: GValueConversion.read(value))
        }
    }

    package subscript(field: String) -> Value? {
        get { fields.first { $0.name == field }?.value }
        set {
            if let index = fields.firstIndex(where: { $0.name == field }) {
                if let newValue { fields[index].value = newValue } else { fields.remove(at: index) }
            } else if let newValue {
                fields.append(Field(name: field, value: newValue))
            }
        }
    }

    package func hasField(_ field: String) -> Bool { fields.contains { $0.name == field } }
    package func int(_ field: String) -> Int? { self[field]?.intValue }
    package func uint(_ field: String) -> UInt? { self[field]?.uintValue }
    package func double(_ field: String) -> Double? { self[field]?.doubleValue }
    package func string(_ field: String) -> String? { self[field]?.stringValue }
    package func bool(_ field: String) -> Bool? { self[field]?.boolValue }
    package func structure(_ field: String) -> Structure? { self[field]?.structureValue }

    package func fraction(_ field: String) -> (numerator: Int, denominator: Int)? {
        if case .fraction(let n, let d) = self[field] { (n, d) } else { nil }
    }

    /// GStreamer's own text form of this structure.
    package var description: String {
        // A field read back as `.other` has no GValue to go back to GStreamer as: the fields are
        // then written as Swift sees them, so the text still shows every one.
        guard let native = try? makeNative() else {
            return ([name] + fields.map { "\($0.name)=\($0.value)" }).joined(separator: ", ")
        }
        defer { gst_structure_free(native) }
        guard let text = gst_structure_to_string(native) else { return name }
        defer { g_free(text) }
        return String(cString: text)
    }

    /// Builds a newly allocated GstStructure; the caller frees it.
    func makeNative() throws(GStreamerError) -> UnsafeMutablePointer<GstStructure> {
        GStreamerRuntime.require()
        let native = gst_structure_new_empty(name)!
        for field in fields {
            do {
                var value = try GValueConversion.makeNatural(field.value)
                gst_structure_take_value(native, field.name, &value)
            } catch {
                gst_structure_free(native)
                throw .notSupported("structure field '\(field.name)': \(error)")
            }
        }
        return native
    }
}
