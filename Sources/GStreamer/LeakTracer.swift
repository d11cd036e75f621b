internal import CGLibShims
internal import CGStreamer
internal import CGStreamerShims
import Foundation
import Synchronization

/// Leak checks inside a running process, on GStreamer's `leaks` tracer.
///
/// The tracer only exists when `GST_TRACERS` contains `leaks` before GStreamer initialises;
/// `enableBeforeInitialization()` arranges that for test processes. We use its activity
/// checkpoints (type and address of every object created or destroyed), never
/// `get-live-objects`: in GStreamer 1.22 that signal takes over a reference of every live
/// object it reports, which destroys objects that are still in use.
package enum LeakTracer {
    /// Adds `leaks` to `GST_TRACERS` if GStreamer has not been initialised yet.
    /// Returns false when it is too late (GStreamer already initialised without the tracer).
    @discardableResult
    package static func enableBeforeInitialization() -> Bool {
        if gst_is_initialized() != 0 { return isActive }
        let current = ProcessInfo.processInfo.environment["GST_TRACERS"] ?? ""
        if !current.split(separator: ";").contains(where: { $0.hasPrefix("leaks") }) {
            setenv("GST_TRACERS", current.isEmpty ? "leaks" : current + ";leaks", 1)
        }
        return true
    }

    /// True when the leaks tracer is running in this process.
    package static var isActive: Bool { withTracer { _ in true } ?? false }

    /// Writes every live tracked object, with its creation stack trace when the tracer was
    /// configured with `stack-traces-flags=full`, to GStreamer's debug log (category GST_TRACER).
    /// Non-destructive, unlike `get-live-objects`. Throws when no leaks tracer runs or it has no
    /// such signal (GStreamer before 1.18).
    package static func logLiveObjects() throws(GStreamerError) {
        let emitted = withTracer { tracer -> GStreamerError? in
            do throws(GStreamerError) { _ = try tracer.emit("log-live-objects", arguments: []); return nil } catch { return error }
        }
        switch emitted {
        case nil: throw .notSupported("no leaks tracer runs in this process")
        case let failure??: throw failure
        case .some(nil): return
        }
    }

    /// True when the registered type `typeName` is `ancestor` or derives from it (e.g. whether a
    /// surviving type is an element). Unknown names are false.
    package static func type(_ typeName: String, isA ancestor: String) -> Bool {
        GStreamerRuntime.require()
        let type = g_type_from_name(typeName), base = g_type_from_name(ancestor)
        return type != 0 && base != 0 && g_type_is_a(type, base) != 0
    }

    // @unchecked Sendable: created once and kept for the process lifetime (GStreamer's hook table
    // holds its raw pointer); never mutated from Swift.
    private struct TracerHandle: @unchecked Sendable { let object: UnsafeMutableRawPointer }
    private static let runtimeTracer = Mutex<TracerHandle?>(nil)

    /// Makes sure a leaks tracer runs, creating one now when GST_TRACERS did not ask for it at
    /// start-up. It tracks objects created from then on, which is all a tracking needs.
    @discardableResult
    package static func ensureActive() -> Bool {
        if isActive { return true }
        return runtimeTracer.withLock { handle -> Bool in
            if handle != nil { return true }
            guard let found = gst_registry_find_feature(gst_registry_get(), "leaks", gst_tracer_factory_get_type()) else { return false }
            let loaded = gst_plugin_feature_load(found)
            gst_object_unref(UnsafeMutableRawPointer(found))
            guard let feature = loaded else { return false }
            defer { gst_object_unref(UnsafeMutableRawPointer(feature)) }
            let type = gst_tracer_factory_get_tracer_type(feature)
            guard let object = g_object_new_with_properties(type, 0, nil, nil) else { return false }
            handle = TracerHandle(object: UnsafeMutableRawPointer(object))
            return true
        }
    }

    /// True while a `Tracking` exists. GStreamer 1.22's tracer returns from a second
    /// "activity-start-tracking" with its lock still held, which freezes every thread that creates
    /// an object from then on; we refuse the second tracking instead.
    private static let trackingRuns = Mutex(false)

    /// Starts recording which GstObjects and GstMiniObjects are created from now on, starting a
    /// leaks tracer if none runs. Only one tracking may run at a time (the tracer's checkpoints are
    /// process-wide, so tests that track must not run in parallel); returns nil when another
    /// tracking runs, no tracer can be had, or the tracer has no activity signals (GStreamer
    /// before 1.18), so a tracking that exists really records.
    package static func startTracking() -> Tracking? {
        guard trackingRuns.withLock({ runs in defer { runs = true }; return !runs }) else { return nil }
        guard ensureActive(), withTracer({ tracer -> Bool in
            do throws(GStreamerError) {
                _ = try tracer.emit("activity-start-tracking", arguments: [])
                _ = try checkpoint(tracer) // drop whatever an earlier tracking left
                return true
            } catch {
                return false
            }
        }) == true else {
            trackingRuns.withLock { $0 = false }
            return nil
        }
        return Tracking()
    }

    /// Objects created since tracking began, by address, until they are destroyed.
    package final class Tracking: Sendable {
        private let alive = Mutex<[String: (type: String, count: Int)]>([:])

        /// The objects created since `startTracking()` that are still alive, counted by type.
        /// The total is exact; a type can be mislabelled when one checkpoint saw an address freed
        /// and reused by another type (the tracer's lists are unordered). It can miss a leak when a
        /// destroyed pre-existing object's address is reused.
        package func survivors() -> [String: Int] {
            // `startTracking` took a checkpoint from this same tracer: it has the signal.
            let events = withTracer({ try? checkpoint($0) }).flatMap { $0 } ?? (created: [], removed: [])
            return alive.withLock { alive in
                for (type, address) in events.created {
                    alive[address, default: (type, 0)].count += 1
                    alive[address]?.type = type
                }
                for (_, address) in events.removed {
                    guard let entry = alive[address] else { continue }
                    alive[address] = entry.count > 1 ? (entry.type, entry.count - 1) : nil
                }
                return alive.values.reduce(into: [:]) { $0[$1.type, default: 0] += $1.count }
            }
        }

        deinit {
            // The tracer answered "activity-start-tracking", so it has the stop signal too (both 1.18).
            _ = LeakTracer.withTracer { tracer in _ = try? tracer.emit("activity-stop-tracking", arguments: []) }
            LeakTracer.trackingRuns.withLock { $0 = false }
        }
    }

    private static func checkpoint(_ tracer: Object) throws(GStreamerError) -> (created: [(String, String)], removed: [(String, String)]) {
        try tracer.emitRaw("activity-get-checkpoint", arguments: []) { result in
            guard let boxed = g_value_get_boxed(result) else { return (created: [], removed: []) }
            let structure = UnsafePointer(boxed.assumingMemoryBound(to: GstStructure.self))
            return (created: entries(structure, "objects-created-list"), removed: entries(structure, "objects-removed-list"))
        } ?? (created: [], removed: [])
    }

    private static func entries(_ checkpoint: UnsafePointer<GstStructure>, _ field: String) -> [(String, String)] {
        guard let list = gst_structure_get_value(checkpoint, field) else { return [] }
        return (0..<gst_value_list_get_size(list)).compactMap { index in
            guard let entry = gst_value_get_structure(gst_value_list_get_value(list, index)),
                  let type = gst_structure_get_string(entry, "type-name"),
                  let address = gst_structure_get_string(entry, "address") else { return nil }
            return (String(cString: type), String(cString: address))
        }
    }

    fileprivate static func withTracer<R>(_ body: (Object) -> R) -> R? {
        GStreamerRuntime.require()
        guard let tracers = gst_tracing_get_active_tracers() else { return nil }
        defer { g_list_free_full(tracers) { gst_object_unref($0) } }
        var node: UnsafeMutablePointer<GList>? = tracers
        while let current = node {
            if let data = current.pointee.data,
               String(cString: g_type_name(ecv_object_type(data))) == "GstLeaksTracer" {
                return body(Object(data, .borrowed))
            }
            node = current.pointee.next
        }
        return nil
    }
}
