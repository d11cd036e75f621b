internal import CGLibShims
internal import CGStreamer
internal import CGStreamerShims

/// A GObject seen from Swift: one strong reference, released when the wrapper goes.
///
/// How the reference was obtained is stated at construction (`Ownership`), so a floating
/// reference is sunk exactly once and a borrowed one is retained exactly once.
// @unchecked Sendable: the only stored state is an immutable pointer to a GObject we hold a
// strong reference to; GObject reference counting and property access are thread-safe.
package class Object: @unchecked Sendable, Hashable, CustomStringConvertible {
    enum Ownership {
        /// We received a reference we now own (transfer full) that is not floating.
        case owned
        /// We received a possibly floating reference (transfer floating): sink it.
        case floating
        /// We borrow a pointer (transfer none): take our own reference.
        case borrowed
    }

    let raw: UnsafeMutableRawPointer

    required init(_ pointer: UnsafeMutableRawPointer, _ ownership: Ownership) {
        raw = pointer
        switch ownership {
        case .owned: break
        case .floating: g_object_ref_sink(pointer)
        case .borrowed: g_object_ref(pointer)
        }
    }

    deinit { g_object_unref(raw) }

    var gobject: UnsafeMutablePointer<GObject> { raw.assumingMemoryBound(to: GObject.self) }

    /// The GType name, e.g. "GstVP8Enc".
    package var typeName: String { String(cString: g_type_name(ecv_object_type(raw))) }

    var gtype: GType { ecv_object_type(raw) }

    /// True when this object's class is `typeName` or derives from it.
    package func isA(_ typeName: String) -> Bool {
        let target = g_type_from_name(typeName)
        return target != 0 && g_type_is_a(gtype, target) != 0
    }

    /// A diagnosticName for error messages: the object's name when it has one, else its type.
    var diagnosticName: String { typeName }

    package var description: String { "\(typeName)(\(raw))" }

    /// The current reference count, for leak diagnostics only.
    package var referenceCount: Int { Int(gobject.pointee.ref_count) }

    package static func == (lhs: Object, rhs: Object) -> Bool { lhs.raw == rhs.raw }
    package func hash(into hasher: inout Hasher) { hasher.combine(raw) }

    /// Wraps any GObject pointer in the most specific Swift class the binding has for it.
    static func wrap(_ pointer: UnsafeMutableRawPointer, _ ownership: Ownership) -> Object {
        let type = ecv_object_type(pointer)
        let cls: Object.Type =
            // A pipeline met by reference (e.g. as a parent) is wrapped as a Bin: only the owner
            // that created it as `Pipeline` watches its bus.
            if g_type_is_a(type, gst_bin_get_type()) != 0 { Bin.self }
            else if g_type_is_a(type, gst_element_get_type()) != 0 {
                g_type_name(type).map { String(cString: $0) } == "GstWebRTCBin" ? WebRTCBin.self : Element.self
            }
            else if g_type_is_a(type, gst_pad_get_type()) != 0 { Pad.self }
            else if g_type_is_a(type, gst_webrtc_data_channel_get_type()) != 0 { DataChannel.self }
            else { Object.self }
        return cls.init(pointer, ownership)
    }
}
