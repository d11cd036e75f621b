internal import CGStreamer

/// Media capabilities ("video/x-raw,width=640,height=480"), with value semantics.
///
/// GStreamer caps become immutable once shared; this type only ever holds shared references
/// and copies before building new caps, so it is safe to pass anywhere.
package struct Caps: Sendable, Equatable, CustomStringConvertible {
    // @unchecked Sendable: holds one reference to a GstCaps that is never written after wrapping
    // (writes would need gst_caps_make_writable, which this binding never does on shared caps).
    final class Storage: @unchecked Sendable {
        let pointer: UnsafeMutablePointer<GstCaps>
        init(owning pointer: UnsafeMutablePointer<GstCaps>) { self.pointer = pointer }
        deinit { gst_caps_unref(pointer) }
    }

    let storage: Storage
    var pointer: UnsafeMutablePointer<GstCaps> { storage.pointer }

    /// Parses caps from GStreamer's text form; throws naming the text when it does not parse.
    package init(_ text: String) throws(GStreamerError) {
        GStreamerRuntime.require()
        guard let caps = gst_caps_from_string(text) else { throw .invalidCaps(text) }
        storage = Storage(owning: caps)
    }

    init(owning pointer: UnsafeMutablePointer<GstCaps>) { storage = Storage(owning: pointer) }
    init(borrowing pointer: UnsafeMutablePointer<GstCaps>) { storage = Storage(owning: gst_caps_ref(pointer)) }

    /// Caps that accept anything.
    package static var any: Caps { GStreamerRuntime.require(); return Caps(owning: gst_caps_new_any()) }

    package var description: String {
        guard let text = gst_caps_to_string(pointer) else { return "" }
        defer { g_free(text) }
        return String(cString: text)
    }

    package var isAny: Bool { gst_caps_is_any(pointer) != 0 }
    package var isEmpty: Bool { gst_caps_is_empty(pointer) != 0 }
    package var isFixed: Bool { gst_caps_is_fixed(pointer) != 0 }

    /// The caps' structures, converted to Swift values.
    package var structures: [Structure] {
        (0..<gst_caps_get_size(pointer)).compactMap { index in
            gst_caps_get_structure(pointer, index).map { Structure(reading: $0) }
        }
    }

    /// The media type of the first structure, e.g. "video/x-raw".
    package var mediaType: String? {
        guard gst_caps_get_size(pointer) > 0, let structure = gst_caps_get_structure(pointer, 0) else { return nil }
        return String(cString: gst_structure_get_name(structure))
    }

    package func intersects(_ other: Caps) -> Bool { gst_caps_can_intersect(pointer, other.pointer) != 0 }
    package func isSubset(of other: Caps) -> Bool { gst_caps_is_subset(pointer, other.pointer) != 0 }

    package func intersection(_ other: Caps) -> Caps {
        Caps(owning: gst_caps_intersect(pointer, other.pointer))
    }

    package static func == (lhs: Caps, rhs: Caps) -> Bool {
        lhs.pointer == rhs.pointer || gst_caps_is_equal(lhs.pointer, rhs.pointer) != 0
    }
}
