internal import CGStreamer

/// What the element registry knows about one element: present or not, its rank and its class.
package struct ElementFactory: Sendable, Hashable {
    /// The factory name, e.g. "x264enc".
    package let name: String
    /// The registry rank: 256 primary, 128 secondary, 64 marginal, 0 none.
    package let rank: Int
    /// The "klass" metadata, e.g. "Codec/Encoder/Video/Hardware".
    package let klass: String
    package let longName: String
    package let pluginName: String?

    /// Looks a factory up in the registry by name (never by spawning gst-inspect).
    package static func find(_ name: String) -> ElementFactory? {
        GStreamerRuntime.require()
        guard let factory = gst_element_factory_find(name) else { return nil }
        defer { gst_object_unref(UnsafeMutableRawPointer(factory)) }
        return ElementFactory(factory)
    }

    /// Every element factory whose klass contains all of `klassParts` (e.g. ["Encoder", "Video"]).
    package static func all(klassContaining klassParts: [String] = []) -> [ElementFactory] {
        GStreamerRuntime.require()
        // Every element factory in the registry; gst_element_factory_list_get_elements would skip
        // plain filters (videoconvert, queue) that match none of its type classes.
        let list = gst_registry_get_feature_list(gst_registry_get(), gst_element_factory_get_type())
        defer { gst_plugin_feature_list_free(list) }
        var result: [ElementFactory] = []
        var node = list
        while let current = node {
            if let data = current.pointee.data {
                let factory = ElementFactory(OpaquePointer(data))
                if klassParts.allSatisfy({ factory.klass.contains($0) }) { result.append(factory) }
            }
            node = current.pointee.next
        }
        return result.sorted { ($0.rank, $1.name) > ($1.rank, $0.name) }
    }

    init(_ factory: OpaquePointer) {
        let feature = factory
        let rawName = gst_object_get_name(UnsafeMutableRawPointer(feature).assumingMemoryBound(to: GstObject.self))
        name = rawName.map { String(cString: $0) } ?? ""
        g_free(rawName)
        rank = Int(gst_plugin_feature_get_rank(feature))
        klass = gst_element_factory_get_metadata(factory, GST_ELEMENT_METADATA_KLASS).map { String(cString: $0) } ?? ""
        longName = gst_element_factory_get_metadata(factory, GST_ELEMENT_METADATA_LONGNAME).map { String(cString: $0) } ?? name
        pluginName = gst_plugin_feature_get_plugin_name(feature).map { String(cString: $0) }
    }
}
