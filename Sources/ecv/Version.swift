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

    /// The git commit this binary was built from (12 hex digits, `-dirty` with uncommitted
    /// changes), captured by the build (Plugins/BuildCommit); "unknown" when built outside a git
    /// checkout, as from a tarball.
    static var commit: String { BuildCommit.commit }

    /// `ecv 0.3.0`, then the git commit, the GStreamer library loaded and the Swift compiler, one per line.
    static var report: String {
        "ecv \(number)\ncommit \(commit)\n\(GStreamerRuntime.versionString)\nSwift \(swift)"
    }
}
