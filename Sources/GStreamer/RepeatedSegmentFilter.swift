internal import CGLibShims
internal import CGStreamer
internal import CGStreamerShims
import GLibCore
import Synchronization

/// Keeps a segment event that repeats the one the pad last let through from going downstream.
///
/// Why: `rtpfunnel` (webrtcbin's bundle of audio and video into one RTP session) pushes its input's
/// segment every time the input changes, so with audio and video interleaved nearly every packet
/// sent sends a segment event down the whole send path first (the RTP session, the RTX sender,
/// SRTP, the DTLS bin, `nicesink`): 11 % of a sending process's CPU in the cost benchmark's
/// profile. The segments of both inputs are usually the same; a repeat changes nothing
/// downstream, so it stops here. A different segment goes on, and a flush or a new stream forgets
/// the last one (downstream drops its segment then).
///
/// GStreamer marks a sticky event a probe dropped as delivered, so it is not sent again with the
/// next buffer; a pad linked later still gets the pad's latest segment, which is the same.
package final class RepeatedSegmentFilter: Sendable {
    package let probe: PadProbe
    private let box: SegmentFilterBox

    /// Segment events let through, and repeats kept back, so far.
    package var forwarded: Int { box.forwarded.load(ordering: .relaxed) }
    package var dropped: Int { box.dropped.load(ordering: .relaxed) }

    fileprivate init(probe: PadProbe, box: SegmentFilterBox) {
        self.probe = probe
        self.box = box
    }
}

// @unchecked Sendable: `last` is behind its Mutex, the counts are atomics; nothing else is stored.
final class SegmentFilterBox: ProbeHandlerBox, @unchecked Sendable {
    /// The segment the pad last let through, nil before the first and after a flush.
    let last = Mutex<SegmentValue?>(nil)
    let forwarded = Atomic<Int>(0)
    let dropped = Atomic<Int>(0)

    /// Whether `event` goes on.
    func admits(_ event: UnsafeMutablePointer<GstEvent>) -> Bool {
        switch ecv_event_type(event) {
        case GST_EVENT_SEGMENT:
            var segment: UnsafePointer<GstSegment>?
            gst_event_parse_segment(event, &segment)
            guard let incoming = segment.map({ SegmentValue(segment: $0.pointee) }) else { return true }
            let repeated = last.withLock { last in
                if let previous = last, previous.equals(incoming) { return true }
                last = incoming
                return false
            }
            if repeated { dropped.add(1, ordering: .relaxed) } else { forwarded.add(1, ordering: .relaxed) }
            return !repeated
        case GST_EVENT_FLUSH_STOP, GST_EVENT_STREAM_START:
            last.withLock { $0 = nil }
            return true
        default:
            return true
        }
    }
}

/// A segment copied out of its event.
// @unchecked Sendable: a GstSegment is plain numbers; its reserved pointers are never set.
struct SegmentValue: @unchecked Sendable {
    var segment: GstSegment

    func equals(_ other: SegmentValue) -> Bool {
        var mine = segment, theirs = other.segment
        return gst_segment_is_equal(&mine, &theirs) != 0
    }
}

extension Pad {
    /// Installs a `RepeatedSegmentFilter` on this (source) pad; it stays until its probe is cancelled.
    package func addRepeatedSegmentFilter() -> RepeatedSegmentFilter {
        let filterBox = SegmentFilterBox().published()
        let box = Unmanaged.passRetained(filterBox).toOpaque()
        let mask = GstPadProbeType(GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM.rawValue | GST_PAD_PROBE_TYPE_EVENT_FLUSH.rawValue)
        let id = gst_pad_add_probe(pad, mask, { _, info, data in
            guard let info, let data, let event = ecv_probe_info_event(info) else { return GST_PAD_PROBE_OK }
            let box = Unmanaged<SegmentFilterBox>.fromOpaque(data).takeUnretainedValue()
            box.received()
            return box.admits(event) ? GST_PAD_PROBE_OK : GST_PAD_PROBE_DROP
        }, box, ProbeHandlerBox.release)
        return RepeatedSegmentFilter(probe: PadProbe(pad: raw, id: id, life: filterBox.life), box: filterBox)
    }
}
