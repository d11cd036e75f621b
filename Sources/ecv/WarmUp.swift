import ECV
import GStreamer
import MediaRuntime

/// The plugins and one-time set-up a call runs on (MediaRuntime's `CallWarmUp`), loaded before
/// `ecv demo`'s first call, which starts within a second of the demo in the same process, so they
/// do not stall its media. Called once the options are checked, so a usage error stays instant.
enum WarmUp {
    static func now(videoCodec: String) throws(CLIError) {
        do throws(GStreamerError) {
            let missing = try CallWarmUp.loadCallPlugins(videoCodec: videoCodec)
            if !missing.isEmpty { Logger.debug("not on this host, so not loaded ahead: \(missing.joined(separator: ", "))") }
        } catch {
            throw .failed("GStreamer cannot start: \(error)")
        }
    }
}
