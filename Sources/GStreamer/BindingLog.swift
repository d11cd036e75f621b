internal import CGStreamer
internal import CGStreamerShims

/// What the binding notices where nobody can be thrown to (a signal handler on a streaming
/// thread): a WARNING in GStreamer's debug log, category `ecvkit` (shown with `GST_DEBUG=2`,
/// or `GST_DEBUG=ecvkit:2` for these alone).
enum BindingLog {
    // @unchecked Sendable: GStreamer keeps a registered category for the process lifetime, and
    // logging to it is thread-safe.
    private struct Category: @unchecked Sendable { let pointer: UnsafeMutablePointer<GstDebugCategory> }
    private static let category = Category(pointer: _gst_debug_category_new("ecvkit", 0, "ECVKit's GStreamer binding"))

    /// Logs `text` as a warning about `object` (a GObject), when given.
    static func warning(_ text: String, about object: UnsafeMutableRawPointer?,
                        file: String = #fileID, function: String = #function, line: Int = #line) {
        ecv_debug_log_string(category.pointer, GST_LEVEL_WARNING, file, function, gint(line),
                             object?.assumingMemoryBound(to: GObject.self), text)
    }
}
