import Foundation

/// Reads the `element-latency` records that gst-launch-1.0 writes with
/// `GST_TRACERS="latency(flags=element)" GST_DEBUG="GST_TRACER:7"`, e.g.
/// `… GST_TRACER :0:: element-latency, element-id=(string)0x…, element=(string)video_encoder, src=(string)src, time=(guint64)2128098, ts=(guint64)29955179;`
package enum TracerLog {
    /// The environment that makes gst-launch-1.0 write element latency records to `logPath`.
    package static func environment(logPath: String) -> [String: String] {
        ["GST_TRACERS": "latency(flags=element)", "GST_DEBUG": "GST_TRACER:7",
         "GST_DEBUG_NO_COLOR": "1", "GST_DEBUG_FILE": logPath]
    }

    /// Nanoseconds each buffer spent inside `element`, in log order.
    package static func elementLatencies(in path: String, element: String) throws -> [UInt64] {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let elementField = "element=(string)\(element),"
        var times: [UInt64] = []
        for line in text.split(separator: "\n") where line.contains("element-latency,") && line.contains(elementField) {
            guard let range = line.range(of: "time=(guint64)") else { continue }
            let digits = line[range.upperBound...].prefix { $0.isNumber }
            if let value = UInt64(digits) { times.append(value) }
        }
        return times
    }
}
