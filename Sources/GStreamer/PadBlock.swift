internal import CGStreamer
import Dispatch
import GLibCore

// @unchecked Sendable: only `let` fields of Sendable types, set in init before `published()` (see `HandOffBox`).
final class IdleBlockBox: ProbeHandlerBox, @unchecked Sendable {
    let idle = DispatchSemaphore(value: 0)
}

extension Pad {
    /// Stops data from crossing this pad once the push running through it (if any) has
    /// returned, and keeps it stopped until the returned probe is cancelled: what lets the
    /// elements behind the pad be replaced while the pipeline plays. Returns nil (and leaves
    /// the pad free) when the pad did not go idle within `timeout`.
    ///
    /// GStreamer calls an idle probe at once when no thread is inside a push here, otherwise
    /// from the last thread to leave it; new pushes wait for as long as the probe stays.
    public func blockWhenIdle(timeout: Duration) -> PadProbe? {
        let blockBox = IdleBlockBox().published()
        let box = Unmanaged.passRetained(blockBox).toOpaque()
        let id = gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_IDLE, { _, _, data in
            guard let data else { return GST_PAD_PROBE_OK }
            let box = Unmanaged<IdleBlockBox>.fromOpaque(data).takeUnretainedValue()
            box.received()
            box.idle.signal()
            return GST_PAD_PROBE_OK
        }, box, ProbeHandlerBox.release)
        let probe = PadProbe(pad: raw, id: id, life: blockBox.life)
        let milliseconds = Int(timeout.components.seconds * 1000) + Int(timeout.components.attoseconds / 1_000_000_000_000_000)
        guard blockBox.idle.wait(timeout: .now() + .milliseconds(milliseconds)) == .success else {
            probe.cancel()
            return nil
        }
        return probe
    }
}
