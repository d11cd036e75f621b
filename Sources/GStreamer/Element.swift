internal import CGLibShims
internal import CGStreamer
internal import CGStreamerShims
import GLibCore

/// The states of a GStreamer element.
package enum State: Int, Sendable, Comparable, CustomStringConvertible {
    case voidPending = 0, null = 1, ready = 2, paused = 3, playing = 4

    init(_ state: GstState) { self = State(rawValue: Int(state.rawValue)) ?? .voidPending }
    var native: GstState { GstState(rawValue: UInt32(rawValue)) }

    package var description: String {
        switch self {
        case .voidPending: "VOID_PENDING"
        case .null: "NULL"
        case .ready: "READY"
        case .paused: "PAUSED"
        case .playing: "PLAYING"
        }
    }
    package static func < (lhs: State, rhs: State) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// A GStreamer element.
// @unchecked Sendable: adds no stored state to Object; GstElement API used here is thread-safe.
package class Element: Object, @unchecked Sendable {
    var element: UnsafeMutablePointer<GstElement> { raw.assumingMemoryBound(to: GstElement.self) }
    var gstObject: UnsafeMutablePointer<GstObject> { raw.assumingMemoryBound(to: GstObject.self) }

    /// Creates an element from its factory name; throws `elementNotFound` naming the factory.
    package convenience init(factory: String, name: String? = nil) throws(GStreamerError) {
        GStreamerRuntime.require()
        guard let created = gst_element_factory_make(factory, name) else {
            throw .elementNotFound(factory: factory)
        }
        self.init(UnsafeMutableRawPointer(created), .floating)
    }

    /// The element's instance name (unique within its bin).
    package var name: String {
        guard let name = gst_object_get_name(gstObject) else { return "" }
        defer { g_free(name) }
        return String(cString: name)
    }

    override var diagnosticName: String { "element '\(name)' (\(factoryName ?? typeName))" }

    /// The name of the factory that made this element, e.g. "vp8enc".
    package var factoryName: String? {
        guard let factory = gst_element_get_factory(element) else { return nil }
        guard let name = gst_object_get_name(UnsafeMutableRawPointer(factory).assumingMemoryBound(to: GstObject.self)) else { return nil }
        defer { g_free(name) }
        return String(cString: name)
    }

    /// The containing bin, if any.
    package var parent: Element? {
        guard let parent = gst_object_get_parent(gstObject) else { return nil }
        return Object.wrap(UnsafeMutableRawPointer(parent), .owned) as? Element
    }

    // MARK: Pads

    package func staticPad(_ name: String) -> Pad? {
        gst_element_get_static_pad(element, name).map { Pad(UnsafeMutableRawPointer($0), .owned) }
    }

    /// Requests a pad from a template such as "sink_%u" or "video_%u".
    package func requestPad(_ templateName: String) throws(GStreamerError) -> Pad {
        guard let pad = gst_element_request_pad_simple(element, templateName) else {
            throw .padNotFound(element: diagnosticName, pad: templateName)
        }
        return Pad(UnsafeMutableRawPointer(pad), .owned)
    }

    package func releaseRequestPad(_ pad: Pad) {
        gst_element_release_request_pad(element, pad.pad)
    }

    /// All pads of the element, in order.
    package var pads: [Pad] {
        var result: [Pad] = []
        withObjectLock(gstObject) {
            var node = element.pointee.pads
            while let current = node {
                if let data = current.pointee.data { result.append(Pad(data, .borrowed)) }
                node = current.pointee.next
            }
        }
        return result
    }

    // MARK: Linking

    /// Links this element's source to `sink`'s sink, optionally through a caps filter.
    package func link(to sink: Element, filter: Caps? = nil) throws(GStreamerError) {
        let ok = gst_element_link_filtered(element, sink.element, filter?.pointer) != 0
        guard ok else {
            throw .linkFailed(source: diagnosticName, sink: sink.diagnosticName,
                              reason: filter.map { "no common format with \($0)" } ?? "no compatible pads or formats")
        }
    }

    /// Links named pads (static, or request pads by name or template such as "sink_0"); a nil
    /// name lets GStreamer pick a compatible pad, requesting one when needed.
    package func link(pad sourcePad: String?, to sink: Element, pad sinkPad: String?, filter: Caps? = nil) throws(GStreamerError) {
        guard gst_element_link_pads_filtered(element, sourcePad, sink.element, sinkPad, filter?.pointer) != 0 else {
            throw .linkFailed(source: diagnosticName + (sourcePad.map { " pad \($0)" } ?? ""),
                              sink: sink.diagnosticName + (sinkPad.map { " pad \($0)" } ?? ""),
                              reason: filter.map { "no common format with \($0)" } ?? "no compatible pads or formats")
        }
    }

    package func unlink(from sink: Element) { gst_element_unlink(element, sink.element) }

    /// Seeks to `position` (nanoseconds). A segment seek makes the pipeline post SEGMENT_DONE
    /// instead of EOS at the end, which is how files loop without a gap.
    @discardableResult
    package func seek(to position: UInt64 = 0, flushing: Bool, segment: Bool) -> Bool {
        var flags = GST_SEEK_FLAG_ACCURATE.rawValue
        if flushing { flags |= GST_SEEK_FLAG_FLUSH.rawValue }
        if segment { flags |= GST_SEEK_FLAG_SEGMENT.rawValue }
        return gst_element_seek(element, 1.0, GST_FORMAT_TIME, GstSeekFlags(flags),
                                GST_SEEK_TYPE_SET, gint64(position), GST_SEEK_TYPE_NONE, -1) != 0
    }

    // MARK: State

    /// The element's current state (not waiting for pending transitions).
    package var currentState: State { State(ecv_element_current_state(element)) }

    /// Changes state without waiting for asynchronous transitions to complete.
    /// Returns false when GStreamer reports an immediate failure.
    @discardableResult
    package func requestState(_ state: State) -> Bool {
        gst_element_set_state(element, state.native) != GST_STATE_CHANGE_FAILURE
    }

    /// Stops an element that is about to leave a running bin. Its state is locked first: a state
    /// change the bin makes meanwhile (a new sink finishing its preroll makes the pipeline apply
    /// PLAYING to every child again) would otherwise restart it, and it would be disposed while
    /// its streaming thread still runs.
    package func stopForRemoval() {
        gst_element_set_locked_state(element, 1)
        gst_element_set_state(element, GST_STATE_NULL)
    }

    /// Brings a newly added element to its parent's state.
    @discardableResult
    package func syncStateWithParent() -> Bool { gst_element_sync_state_with_parent(element) != 0 }

    /// Keeps the element's state fixed while its parent changes state (e.g. a sink added at runtime).
    package func setLockedState(_ locked: Bool) { gst_element_set_locked_state(element, locked ? 1 : 0) }

    /// Sends end-of-stream into the element (sources and pipelines).
    @discardableResult
    package func sendEndOfStream() -> Bool { gst_element_send_event(element, gst_event_new_eos()) != 0 }

    /// The element's clock time right now relative to its base time, or nil without a clock.
    package var runningTime: Duration? {
        guard let clock = gst_element_get_clock(element) else { return nil }
        defer { gst_object_unref(clock) }
        let now = gst_clock_get_time(clock)
        let base = gst_element_get_base_time(element)
        return .nanoseconds(Int64(bitPattern: UInt64(now &- base)))
    }

    /// Posts an application message on the element's bus (delivered through `Pipeline.messages`).
    package func postApplicationMessage(_ structure: Structure) throws(GStreamerError) {
        let native = try structure.makeNative()
        let message = gst_message_new_application(gstObject, native)
        gst_element_post_message(element, message)
    }

    /// Posts an ERROR message from this element on its bus, as GStreamer's own elements report
    /// a failure on a streaming thread; it reaches `Pipeline.messages` and `Pipeline.lastError`.
    package func postError(_ failure: GStreamerError) {
        let error = g_error_new_literal(gst_core_error_quark(), gint(GST_CORE_ERROR_FAILED.rawValue), failure.description)
        defer { g_error_free(error) }
        gst_element_post_message(element, gst_message_new_error(gstObject, error, nil))
    }
}

/// Runs `body` under a GstObject's lock (what the GST_OBJECT_LOCK macro does), e.g. to walk its
/// children or pads consistently.
func withObjectLock(_ object: UnsafeMutablePointer<GstObject>, _ body: () -> Void) {
    g_mutex_lock(&object.pointee.lock)
    defer { g_mutex_unlock(&object.pointee.lock) }
    body()
}
