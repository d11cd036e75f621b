import Foundation
import GStreamer

/// Starts GStreamer with the latency tracer available in-process.
///
/// `LatencyTracer.enable` needs the `coretracers` plugin loaded, and GStreamer 1.22 loads it only
/// when `GST_TRACERS` names one of its tracers at initialisation (the registry knows the feature,
/// but its type is registered on load). We name `factories`, the cheapest tracer of that plugin
/// (one record per element factory used), so the type exists without adding per-buffer work.
package enum TracerSetup {
    package static func initializeWithLatencyTracer() throws {
        let current = ProcessInfo.processInfo.environment["GST_TRACERS"] ?? ""
        if current.isEmpty { setenv("GST_TRACERS", "factories", 1) }
        try GStreamerRuntime.ensureInitialized()
        try LatencyTracer.enable(flags: "element")
    }
}
