internal import CGStreamer

/// A container of elements.
// @unchecked Sendable: adds no stored state to Element.
package class Bin: Element, @unchecked Sendable {
    var bin: UnsafeMutablePointer<GstBin> { raw.assumingMemoryBound(to: GstBin.self) }

    package convenience init(name: String? = nil) {
        GStreamerRuntime.require()
        self.init(UnsafeMutableRawPointer(gst_bin_new(name)!), .floating)
    }

    /// Builds a bin from a gst-launch description; unlinked pads get ghost pads when `ghostUnlinkedPads`.
    package static func parse(_ description: String, ghostUnlinkedPads: Bool = true) throws(GStreamerError) -> Bin {
        GStreamerRuntime.require()
        var error: UnsafeMutablePointer<GError>?
        let result = gst_parse_bin_from_description_full(description, ghostUnlinkedPads ? 1 : 0, nil,
                                                         GST_PARSE_FLAG_FATAL_ERRORS, &error)
        if let message = takeErrorMessage(error) {
            if let result { gst_object_unref(result) }
            throw .parseFailed(launch: description, message: message)
        }
        guard let result else { throw .parseFailed(launch: description, message: "no element") }
        return Bin(UnsafeMutableRawPointer(result), .floating)
    }

    /// Adds an element; the bin takes its own reference, the wrapper keeps ours.
    package func add(_ element: Element) throws(GStreamerError) {
        guard gst_bin_add(bin, element.element) != 0 else {
            throw .notSupported("cannot add \(element.diagnosticName) to \(diagnosticName): name taken or already in a bin")
        }
    }

    package func add(_ elements: [Element]) throws(GStreamerError) {
        for element in elements { try add(element) }
    }

    /// Removes an element (set it to NULL first if it is running).
    package func remove(_ element: Element) {
        gst_bin_remove(bin, element.element)
    }

    /// Stops `element` (see `Element.stopForRemoval()`) and takes it out of this running bin.
    package func stopAndRemove(_ element: Element) {
        element.stopForRemoval()
        remove(element)
    }

    /// Finds a direct or nested child by name.
    package func element(named name: String) -> Element? {
        guard let found = gst_bin_get_by_name(bin, name) else { return nil }
        return Object.wrap(UnsafeMutableRawPointer(found), .owned) as? Element
    }

    /// The direct children of the bin.
    package var children: [Element] {
        var result: [Element] = []
        withObjectLock(gstObject) {
            var node = bin.pointee.children
            while let current = node {
                if let data = current.pointee.data, let child = Object.wrap(data, .borrowed) as? Element {
                    result.append(child)
                }
                node = current.pointee.next
            }
        }
        return result.reversed()
    }

    /// Adds a ghost pad exposing `pad` of a child under `name`.
    @discardableResult
    package func addGhostPad(named name: String, target pad: Pad) throws(GStreamerError) -> Pad {
        guard let ghost = gst_ghost_pad_new(name, pad.pad) else {
            throw .padNotFound(element: diagnosticName, pad: name)
        }
        let wrapper = Pad(UnsafeMutableRawPointer(ghost), .floating)
        gst_pad_set_active(wrapper.pad, 1)
        guard gst_element_add_pad(element, wrapper.pad) != 0 else {
            throw .notSupported("cannot add ghost pad '\(name)' to \(diagnosticName)")
        }
        return wrapper
    }

    /// The graph as Graphviz DOT text, with caps and states.
    package var dotDescription: String {
        guard let dot = gst_debug_bin_to_dot_data(bin, GST_DEBUG_GRAPH_SHOW_ALL) else { return "" }
        defer { g_free(dot) }
        return String(cString: dot)
    }
}
