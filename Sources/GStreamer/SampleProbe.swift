internal import CGStreamer
internal import CGStreamerShims
import GLibCore

// @unchecked Sendable: only `let` fields of Sendable types, set in init before `published()` (see `HandOffBox`).
final class SampleProbeBox: ProbeHandlerBox, @unchecked Sendable {
    let handler: @Sendable (Sample) -> Void
    init(handler: @escaping @Sendable (Sample) -> Void) { self.handler = handler }
}

extension Pad {
    /// Calls `handler` on the streaming thread with every buffer that crosses the pad (each buffer
    /// of a buffer list), as a `Sample` holding a reference to the buffer (no copy) with the pad's
    /// current caps and segment. Buffers always pass on.
    ///
    /// A tap that needs no element: nothing to link, no state to change and no thread, so it can
    /// be added to and taken from a running stream at any time and can never hold it up (an
    /// appsink added to a pipeline that is changing state prerolls, and would block the stream
    /// it is linked to until the pipeline plays). `handler` must not block.
    package func addSampleProbe(_ handler: @escaping @Sendable (Sample) -> Void) -> PadProbe {
        let probeBox = SampleProbeBox(handler: handler).published()
        let box = Unmanaged.passRetained(probeBox).toOpaque()
        let mask = GstPadProbeType(GST_PAD_PROBE_TYPE_BUFFER.rawValue | GST_PAD_PROBE_TYPE_BUFFER_LIST.rawValue)
        let id = gst_pad_add_probe(pad, mask, { pad, info, data in
            guard let pad, let info, let data else { return GST_PAD_PROBE_OK }
            let box = Unmanaged<SampleProbeBox>.fromOpaque(data).takeUnretainedValue()
            box.received()
            if let buffer = ecv_probe_info_buffer(info) {
                Pad.deliver(buffer, crossing: pad, to: box)
            } else if let list = ecv_probe_info_buffer_list(info) {
                for index in 0..<gst_buffer_list_length(list) {
                    guard let buffer = gst_buffer_list_get(list, index) else { continue }
                    Pad.deliver(buffer, crossing: pad, to: box)
                }
            }
            return GST_PAD_PROBE_OK
        }, box, ProbeHandlerBox.release)
        return PadProbe(pad: raw, id: id, life: probeBox.life)
    }

    private static func deliver(_ buffer: UnsafeMutablePointer<GstBuffer>, crossing pad: UnsafeMutablePointer<GstPad>,
                                to box: SampleProbeBox) {
        let caps = gst_pad_get_current_caps(pad) // transfer full; the sample takes its own reference
        defer { if let caps { gst_caps_unref(caps) } }
        let segmentEvent = gst_pad_get_sticky_event(pad, GST_EVENT_SEGMENT, 0) // transfer full
        defer { if let segmentEvent { gst_event_unref(segmentEvent) } }
        var segment: UnsafePointer<GstSegment>?
        if let segmentEvent { gst_event_parse_segment(segmentEvent, &segment) }
        // gst_sample_new refs the buffer and the caps and copies the segment.
        guard let sample = gst_sample_new(buffer, caps, segment, nil) else { return }
        box.handler(Sample(owning: sample))
    }
}
