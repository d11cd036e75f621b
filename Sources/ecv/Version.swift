import GStreamer

/// The release `ecv --version` reports, with the libraries it runs on.
enum ECVVersion {
    /// ECVKit's version; raised with each release (semantic versioning).
    static let number = "0.3.0"

    /// The Swift compiler this binary was built with (Swift has no run-time query for it).
    static var swift: String {
        #if compiler(>=7.0)
        "7.0 or later"
        #elseif compiler(>=6.4)
        "6.4 or later"
        #elseif compiler(>=6.3)
        "6.3"
        #elseif compiler(>=6.2)
        "6.2"
        #elseif compiler(>=6.1)
        "6.1"
        #else
        "6.0"
        #endif
    }

    /// `ecv 0.3.0`, then the GStreamer library loaded and the Swift compiler, one per line.
    static var report: String {
        "ecv \(number)\n\(GStreamerRuntime.versionString)\nSwift \(swift)"
    }
}
