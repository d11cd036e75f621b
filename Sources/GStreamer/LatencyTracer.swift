internal import CGLibShims
internal import CGStreamer
internal import CGStreamerShims
import Synchronization

/// GStreamer's `latency` tracer, switched on at run time, with its records delivered to Swift.
///
/// Tracers are normally chosen by `GST_TRACERS` before initialisation; `MediaParameters.tracing`
/// and the benchmarks need it on demand, so we instantiate the tracer type ourselves (its hooks
/// register on construction) and read its records from the `GST_TRACER` debug category through a
/// log function that forwards every other message to GStreamer's default logger unchanged.
package enum LatencyTracer {
    /// One latency record: `element-latency` (time spent inside one element) or `latency`
    /// (source to sink), as the tracer reports them.
    package struct Record: Sendable {
        package let kind: String
        /// The element for `element-latency`, else the source element.
        package let element: String
        /// The sink element for source-to-sink `latency` records, else nil.
        package let sinkElement: String?
        /// Nanoseconds.
        package let time: UInt64
        /// Nanoseconds since the tracer started, when the record was made.
        package let timestamp: UInt64
    }

    // @unchecked Sendable: the tracer object is created once, held for the process lifetime
    // (GStreamer keeps its raw pointer in the hook table), and never mutated from Swift.
    private struct TracerHandle: @unchecked Sendable { let object: UnsafeMutableRawPointer }
    private static let state = Mutex<(tracers: [String: TracerHandle], listeners: [Int: @Sendable (Record) -> Void], next: Int)>(([:], [:], 0))

    /// Turns the tracer on with `flags` ("element", "pipeline", or "element+pipeline"); idempotent
    /// per flags value. Throws when the tracer plugin is missing.
    package static func enable(flags: String = "element") throws(GStreamerError) {
        GStreamerRuntime.require()
        let created: Bool = try state.withLock { state throws(GStreamerError) in
            guard state.tracers[flags] == nil else { return false }
            guard let found = gst_registry_find_feature(gst_registry_get(), "latency", gst_tracer_factory_get_type()) else {
                throw .elementNotFound(factory: "latency tracer (coretracers plugin)")
            }
            // The tracer type is registered only once its plugin is loaded, which GStreamer does at
            // start-up only for tracers named in GST_TRACERS.
            let loaded = gst_plugin_feature_load(found)
            gst_object_unref(UnsafeMutableRawPointer(found))
            guard let feature = loaded else { throw .notSupported("cannot load the coretracers plugin") }
            defer { gst_object_unref(UnsafeMutableRawPointer(feature)) }
            let type = gst_tracer_factory_get_tracer_type(feature)
            let object = withGValue(of: ecv_type_string()) { params -> UnsafeMutableRawPointer? in
                g_value_set_string(params, "flags=\(flags)")
                return "params".withCString { name in
                    var names: [UnsafePointer<CChar>?] = [name]
                    let created = g_object_new_with_properties(type, 1, &names, params)
                    return created.map { UnsafeMutableRawPointer($0) }
                }
            }
            guard let object else { throw .notSupported("cannot create the latency tracer") }
            state.tracers[flags] = TracerHandle(object: object)
            return true
        }
        if created { installLogFunction() }
    }

    /// Calls `listener` (on a streaming thread) for every latency record until the returned
    /// observation is cancelled.
    package static func observe(_ listener: @escaping @Sendable (Record) -> Void) -> Observation {
        let key = state.withLock { state in
            state.next += 1
            state.listeners[state.next] = listener
            return state.next
        }
        return Observation(key: key)
    }

    package final class Observation: Sendable {
        let key: Int
        init(key: Int) { self.key = key }
        package func cancel() { _ = LatencyTracer.state.withLock { $0.listeners.removeValue(forKey: key) } }
        deinit { cancel() }
    }

    private static let logFunctionInstalled = Mutex(false)

    private static func installLogFunction() {
        let install = logFunctionInstalled.withLock { installed in defer { installed = true }; return !installed }
        guard install else { return }
        gst_debug_set_threshold_for_name("GST_TRACER", GST_LEVEL_TRACE)
        // Our function becomes the only one, forwarding all but tracer records to the default.
        gst_debug_remove_log_function(gst_debug_log_default)
        // This runs for every record of every element on the streaming threads, so records are
        // filtered on the C strings before anything is converted or parsed.
        gst_debug_add_log_function({ category, level, file, function, line, object, message, _ in
            guard let category, let message else { return }
            guard strcmp(gst_debug_category_get_name(category), "GST_TRACER") == 0 else {
                gst_debug_log_default(category, level, file, function, line, object, message, nil)
                return
            }
            guard let text = gst_debug_message_get(message), LatencyTracer.isLatencyRecord(text) else { return }
            let listeners = LatencyTracer.state.withLock { Array($0.listeners.values) }
            guard !listeners.isEmpty, let record = LatencyTracer.parse(String(cString: text)) else { return }
            for listener in listeners { listener(record) }
        }, nil, nil)
    }

    private static func isLatencyRecord(_ text: UnsafePointer<CChar>) -> Bool {
        strncmp(text, "element-latency", 15) == 0 || strncmp(text, "latency", 7) == 0
    }

    static func parse(_ text: String) -> Record? {
        guard text.hasPrefix("latency") || text.hasPrefix("element-latency"),
              // The tracer writes each record as a structure: a text that does not parse is none.
              let structure = try? Structure(parsing: text) else { return nil }
        let isElement = structure.name == "element-latency"
        guard let time = structure.uint("time") ?? structure.int("time").map(UInt.init) else { return nil }
        return Record(kind: structure.name,
                      element: (isElement ? structure.string("element") : structure.string("src-element")) ?? "",
                      sinkElement: isElement ? nil : structure.string("sink-element"),
                      time: UInt64(time),
                      timestamp: UInt64(structure.uint("ts") ?? 0))
    }
}
