internal import CGStreamer

extension Pad {
    /// A string tag of the stream through this pad ("title" is a recorded track's name), read
    /// from the pad's sticky tag events; nil until such an event has passed or without the tag.
    package func streamTag(_ name: String) -> String? {
        var index: guint = 0
        while let event = gst_pad_get_sticky_event(pad, GST_EVENT_TAG, index) {
            defer { gst_mini_object_unref(UnsafeMutableRawPointer(event).assumingMemoryBound(to: GstMiniObject.self)) }
            var list: UnsafeMutablePointer<GstTagList>?
            gst_event_parse_tag(event, &list)
            // The list belongs to the event; the string is ours to free.
            var value: UnsafeMutablePointer<gchar>?
            if let list, gst_tag_list_get_string(list, name, &value) != 0, let value {
                defer { g_free(value) }
                return String(cString: value)
            }
            index += 1
        }
        return nil
    }
}
