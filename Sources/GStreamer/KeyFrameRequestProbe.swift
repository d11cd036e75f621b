internal import CGLibShims
internal import CGStreamer
internal import CGStreamerShims
import GLibCore

// @unchecked Sendable: only `let` fields of Sendable types, set in init before `published()` (see `HandOffBox`).
final class KeyFrameRequestBox: ProbeHandlerBox, @unchecked Sendable {
    let handler: @Sendable () -> Void
    init(handler: @escaping @Sendable () -> Void) { self.handler = handler }
}

extension Pad {
    /// Calls `handler` on the thread that sent it for every upstream force-key-unit event that
    /// reaches this pad (what a PLI or FIR from the far end becomes), and lets the event go on.
    /// A source that has no encoder upstream (pre-encoded media) answers the request itself.
    package func addKeyFrameRequestProbe(_ handler: @escaping @Sendable () -> Void) -> PadProbe {
        let requestBox = KeyFrameRequestBox(handler: handler).published()
        let box = Unmanaged.passRetained(requestBox).toOpaque()
        let id = gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_EVENT_UPSTREAM, { _, info, data in
            guard let info, let data, let event = ecv_probe_info_event(info), gst_video_event_is_force_key_unit(event) != 0 else {
                return GST_PAD_PROBE_OK
            }
            let box = Unmanaged<KeyFrameRequestBox>.fromOpaque(data).takeUnretainedValue()
            box.received()
            box.handler()
            return GST_PAD_PROBE_OK
        }, box, ProbeHandlerBox.release)
        return PadProbe(pad: raw, id: id, life: requestBox.life)
    }
}
