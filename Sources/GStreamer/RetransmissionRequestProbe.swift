internal import CGLibShims
internal import CGStreamer
internal import CGStreamerShims
import GLibCore

// @unchecked Sendable: only `let` fields of Sendable types, set in init before `published()` (see `HandOffBox`).
final class RetransmissionRequestBox: ProbeHandlerBox, @unchecked Sendable {
    let handler: @Sendable (_ ssrc: UInt32, _ seqnum: UInt16) -> ProbeDecision
    init(handler: @escaping @Sendable (_ ssrc: UInt32, _ seqnum: UInt16) -> ProbeDecision) { self.handler = handler }
}

extension Pad {
    /// Calls `handler` for every resend request (`GstRTPRetransmissionRequest`, what rtpsession
    /// makes of the far end's NACK) that travels upstream through this pad, on the thread that
    /// sent it; `.drop` leaves the request unanswered. Other events pass untouched, and no
    /// buffer is looked at.
    package func addRetransmissionRequestProbe(_ handler: @escaping @Sendable (_ ssrc: UInt32, _ seqnum: UInt16) -> ProbeDecision) -> PadProbe {
        let requestBox = RetransmissionRequestBox(handler: handler).published()
        let box = Unmanaged.passRetained(requestBox).toOpaque()
        let id = gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_EVENT_UPSTREAM, { _, info, data in
            guard let info, let data, let event = ecv_probe_info_event(info), ecv_event_type(event) == GST_EVENT_CUSTOM_UPSTREAM,
                  let structure = gst_event_get_structure(event),
                  gst_structure_has_name(structure, "GstRTPRetransmissionRequest") != 0 else { return GST_PAD_PROBE_OK }
            var ssrc: guint = 0, seqnum: guint = 0
            guard gst_structure_get_uint(structure, "ssrc", &ssrc) != 0, gst_structure_get_uint(structure, "seqnum", &seqnum) != 0 else {
                return GST_PAD_PROBE_OK
            }
            let box = Unmanaged<RetransmissionRequestBox>.fromOpaque(data).takeUnretainedValue()
            box.received()
            return box.handler(UInt32(truncatingIfNeeded: ssrc), UInt16(truncatingIfNeeded: seqnum)).probeReturn
        }, box, ProbeHandlerBox.release)
        return PadProbe(pad: raw, id: id, life: requestBox.life)
    }
}
