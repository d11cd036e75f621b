internal import CGLibShims
internal import CGStreamer
internal import CGStreamerShims

/// A pad: an element's input or output.
// @unchecked Sendable: adds no stored state to Object; GstPad API used here is thread-safe.
package final class Pad: Object, @unchecked Sendable {
    package enum Direction: Sendable { case unknown, source, sink }

    var pad: UnsafeMutablePointer<GstPad> { raw.assumingMemoryBound(to: GstPad.self) }

    package var name: String {
        guard let name = gst_object_get_name(raw.assumingMemoryBound(to: GstObject.self)) else { return "" }
        defer { g_free(name) }
        return String(cString: name)
    }

    override var diagnosticName: String { "pad '\(name)'" + (parentElement.map { " of \($0.diagnosticName)" } ?? "") }

    package var direction: Direction {
        switch gst_pad_get_direction(pad) {
        case GST_PAD_SRC: .source
        case GST_PAD_SINK: .sink
        default: .unknown
        }
    }

    /// The element owning this pad.
    package var parentElement: Element? {
        guard let parent = gst_pad_get_parent_element(pad) else { return nil }
        return Object.wrap(UnsafeMutableRawPointer(parent), .owned) as? Element
    }

    /// The caps negotiated on the pad, once data flows.
    package var currentCaps: Caps? { gst_pad_get_current_caps(pad).map { Caps(owning: $0) } }

    /// What the pad could accept or produce now.
    package var allowedCaps: Caps? { gst_pad_query_caps(pad, nil).map { Caps(owning: $0) } }

    package var peer: Pad? { gst_pad_get_peer(pad).map { Pad(UnsafeMutableRawPointer($0), .owned) } }
    package var isLinked: Bool { gst_pad_is_linked(pad) != 0 }

    /// Links this (source) pad to `sink`, naming both and GStreamer's reason on failure.
    package func link(to sink: Pad) throws(GStreamerError) {
        let result = gst_pad_link(pad, sink.pad)
        guard result == GST_PAD_LINK_OK else {
            throw .linkFailed(source: diagnosticName, sink: sink.diagnosticName, reason: String(cString: gst_pad_link_get_name(result)))
        }
    }

    @discardableResult
    package func unlink(from sink: Pad) -> Bool { gst_pad_unlink(pad, sink.pad) != 0 }

    /// Sends end-of-stream downstream from this pad.
    @discardableResult
    package func sendEndOfStream() -> Bool { gst_pad_send_event(pad, gst_event_new_eos()) != 0 }

    /// Sends this sink pad a custom serialized downstream event named `name`, ordered with its
    /// buffers (it waits for the pad's stream lock). Its element passes it on to each of its
    /// outputs, and with it the sticky events an output still owes its peer (stream-start, caps,
    /// segment): a branch just linked behind a tee learns the stream's caps now instead of with
    /// the next buffer. Elements downstream pass on or drop a custom event they do not know.
    /// False when the pad refused it (flushing, or its element is gone).
    @discardableResult
    package func sendCustomDownstreamEvent(named name: String) -> Bool {
        guard direction == .sink, let structure = gst_structure_new_empty(name),
              let event = gst_event_new_custom(GST_EVENT_CUSTOM_DOWNSTREAM, structure) else { return false }
        return gst_pad_send_event(pad, event) != 0
    }

    /// Makes the pad's element negotiate its caps again before its next buffer (a payloader
    /// whose `pt` changed announces the new payload type this way).
    package func markReconfigure() { gst_pad_mark_reconfigure(pad) }

    /// Whether a stream has begun on this pad: its sticky segment event is there, so `chain(_:)`
    /// may hand it buffers.
    package var hasSegment: Bool {
        guard let event = gst_pad_get_sticky_event(pad, GST_EVENT_SEGMENT, 0) else { return false } // transfer full
        gst_event_unref(event)
        return true
    }

    /// Hands `bytes` to this sink pad as one buffer, as its peer's push would; the pad's stream
    /// lock orders it with the peer's own buffers. For a sink whose stream already began (its
    /// segment arrived), e.g. to send a transport's datagram again. False when the pad refused
    /// it (flushing, not negotiated, or its element is gone).
    package func chain(_ bytes: [UInt8]) -> Bool {
        guard direction == .sink, let buffer = gst_buffer_new_allocate(nil, gsize(bytes.count), nil) else { return false }
        bytes.withUnsafeBytes { raw in _ = gst_buffer_fill(buffer, 0, raw.baseAddress, gsize(raw.count)) }
        return gst_pad_chain(pad, buffer) == GST_FLOW_OK
    }

    /// Asks upstream of this pad for a key frame (an upstream `GstForceKeyUnit`).
    ///
    /// From a sink pad the request goes to its peer and on upstream to whatever produces the
    /// stream: a video encoder encodes its next frame as a key frame; in a receive path,
    /// webrtcbin's RTP session turns it into an RTCP PLI (`allHeaders` false, when `nack pli`
    /// was negotiated) or a FIR (`allHeaders` true, when `ccm fir` was). On a src pad (an
    /// encoder's) the pad's own element handles it. Returns false when nothing upstream handled
    /// the request.
    @discardableResult
    package func requestKeyFrame(allHeaders: Bool = false) -> Bool {
        let event = gst_video_event_new_upstream_force_key_unit(GstClockTime.max, allHeaders ? 1 : 0, 0)
        return (direction == .sink ? gst_pad_push_event(pad, event) : gst_pad_send_event(pad, event)) != 0
    }
}
