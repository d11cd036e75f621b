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
    /// from the last thread to leave it. An idle probe alone holds nothing back once it has been
    /// called (a buffer no probe matches passes), so the same probe also blocks downstream data:
    /// pushes that come meanwhile wait until it is cancelled.
    package func blockWhenIdle(timeout: Duration) -> PadProbe? {
        let blockBox = IdleBlockBox().published()
        let box = Unmanaged.passRetained(blockBox).toOpaque()
        let mask = GstPadProbeType(GST_PAD_PROBE_TYPE_IDLE.rawValue | GST_PAD_PROBE_TYPE_BLOCK_DOWNSTREAM.rawValue)
        let id = gst_pad_add_probe(pad, mask, { _, _, data in
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

extension Pad {
    /// Sends this source pad's sticky stream-start, caps and segment events straight into `sink`.
    ///
    /// A push checks the sticky events its pad owes a new peer before it meets a blocking probe,
    /// so a buffer that waited at a block while the peer was replaced reaches the new peer ahead
    /// of its caps (an encoder then refuses it, not negotiated, and the stream stops for good).
    /// Call this while the pad is still blocked, after linking the new peer.
    package func sendStickyEvents(to sink: Pad) {
        for type in [GST_EVENT_STREAM_START, GST_EVENT_CAPS, GST_EVENT_SEGMENT] {
            guard let event = gst_pad_get_sticky_event(pad, type, 0) else { continue }
            // gst_pad_send_event takes the reference gst_pad_get_sticky_event gave us.
            _ = gst_pad_send_event(sink.pad, event)
        }
    }
}
