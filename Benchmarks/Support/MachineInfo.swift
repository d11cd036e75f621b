import Foundation
import GLibCore
import GStreamer

/// What the figures were measured on.
package struct MachineInfo: Codable, Sendable {
    package var cpuModel: String
    package var cores: Int
    package var memoryGiB: Double
    package var kernel: String
    package var gstreamer: String
    package var swift: String
    /// ISO 8601, UTC.
    package var date: String
    /// 1, 5 and 15 minute load averages when the program started.
    package var loadAverage: [Double]

    package static func current() -> MachineInfo {
        let cpuinfo = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
        let model = cpuinfo.split(separator: "\n").first { $0.hasPrefix("model name") }
            .flatMap { $0.split(separator: ":", maxSplits: 1).last }
            .map { $0.trimmingCharacters(in: .whitespaces) } ?? "unknown"
        let kernel = ((try? String(contentsOfFile: "/proc/sys/kernel/osrelease", encoding: .utf8)) ?? "unknown")
            .trimmingCharacters(in: .whitespacesAndNewlines)
        return MachineInfo(cpuModel: model, cores: ProcessInfo.processInfo.activeProcessorCount,
                           memoryGiB: (Double(ProcessInfo.processInfo.physicalMemory) / 1_073_741_824 * 10).rounded() / 10,
                           kernel: "Linux " + kernel, gstreamer: GStreamerRuntime.versionString, swift: swiftVersion,
                           date: ISO8601DateFormatter().string(from: Date()), loadAverage: loadAverage())
    }

    /// `Benchmarks/run.sh` passes `swift --version`'s first line; without it, the compiler that
    /// built this program, as precisely as `#if compiler` can tell.
    static var swiftVersion: String {
        if let given = ProcessInfo.processInfo.environment["ECV_BENCH_SWIFT_VERSION"], !given.isEmpty { return given }
        #if compiler(>=7.0)
        return "Swift compiler ≥ 7.0"
        #elseif compiler(>=6.3)
        return "Swift compiler 6.3"
        #elseif compiler(>=6.2)
        return "Swift compiler 6.2"
        #elseif compiler(>=6.1)
        return "Swift compiler 6.1"
        #else
        return "Swift compiler 6.0"
        #endif
    }

    /// The 1, 5 and 15 minute load averages from /proc/loadavg.
    package static func loadAverage() -> [Double] {
        let text = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? ""
        return text.split(separator: " ").prefix(3).compactMap { Double($0) }
    }
}

/// Measures the wall time and load around one section of a benchmark.
package struct SectionTimer: Sendable {
    private let startLoad: Double
    private let started: UInt64

    package init() {
        startLoad = MachineInfo.loadAverage().first ?? 0
        started = MonotonicClock.nanoseconds()
    }

    package func finish() -> LoadWindow {
        LoadWindow(start: startLoad, end: MachineInfo.loadAverage().first ?? 0,
                   wallSeconds: Double(MonotonicClock.nanoseconds() - started) / 1e9)
    }
}
