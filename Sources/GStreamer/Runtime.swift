internal import CGStreamer
import Foundation
import GLibCore

/// One-time initialisation of GStreamer and the GLib main-loop thread the library owns.
///
/// Every public entry point of the binding calls `GStreamerRuntime.ensureInitialized()`
/// so users never have to remember to; calling it again is free.
package enum GStreamerRuntime {
    private static let initialization: Result<Void, GStreamerError> = {
        var error: UnsafeMutablePointer<GError>?
        guard gst_init_check(nil, nil, &error) != 0 else {
            return .failure(.initializationFailed(takeErrorMessage(error) ?? "gst_init_check failed"))
        }
        _ = MainLoop.shared // GStreamer's bus watches and timers run on it
        return .success(())
    }()

    /// Initialises GStreamer once per process and starts the main loop.
    package static func ensureInitialized() throws(GStreamerError) {
        try initialization.get()
    }

    /// `ensureInitialized()` for call sites that cannot throw: GStreamer failing to
    /// initialise is a broken installation, not a runtime condition to recover from.
    static func require() {
        do { try ensureInitialized() } catch { fatalError("GStreamer is not usable: \(error)") }
    }

    /// The GStreamer library version, e.g. "GStreamer 1.22.0".
    package static var versionString: String {
        require()
        guard let raw = gst_version_string() else { return "GStreamer (unknown)" }
        defer { g_free(raw) }
        return String(cString: raw)
    }

    /// The (major, minor, micro) version triple of the loaded GStreamer library.
    package static var version: (major: Int, minor: Int, micro: Int) {
        var major: guint = 0, minor: guint = 0, micro: guint = 0, nano: guint = 0
        gst_version(&major, &minor, &micro, &nano)
        return (Int(major), Int(minor), Int(micro))
    }
}

/// Takes ownership of a `GError`, returns its message and frees it.
func takeErrorMessage(_ error: UnsafeMutablePointer<GError>?) -> String? {
    guard let error else { return nil }
    defer { g_error_free(error) }
    guard let message = error.pointee.message else { return nil }
    return String(cString: message)
}
