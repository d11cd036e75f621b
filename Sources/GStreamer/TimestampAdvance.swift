internal import CGLibShims
internal import CGStreamer
internal import CGStreamerShims
import GLibCore

// @unchecked Sendable: only `let` fields of Sendable types, set in init before `published()` (see `HandOffBox`).
final class TimestampAdvanceBox: ProbeHandlerBox, @unchecked Sendable {
    let nanoseconds: UInt64
    init(nanoseconds: UInt64) { self.nanoseconds = nanoseconds }
}

extension Pad {
    /// Moves the timestamps (PTS and DTS) of every buffer leaving this pad `nanoseconds` earlier,
    /// never below zero, until the probe is cancelled.
    ///
    /// Why: an element that delays its signal while keeping its input's timestamps (an audio
    /// processor's filters, an encoder's look-ahead) leaves the sound at a later place than its
    /// timestamps say; downstream (the RTP timestamps, the sender reports, a recording) then puts
    /// it that much after the picture captured with it. Buffers are changed in place, so segments
    /// stay as they are (a pad offset would change this stream's segment, and webrtcbin's bundle
    /// would push a different segment at every switch between audio and video).
    package func addTimestampAdvance(nanoseconds: UInt64) -> PadProbe {
        let advanceBox = TimestampAdvanceBox(nanoseconds: nanoseconds).published()
        let box = Unmanaged.passRetained(advanceBox).toOpaque()
        let mask = GstPadProbeType(GST_PAD_PROBE_TYPE_BUFFER.rawValue | GST_PAD_PROBE_TYPE_BUFFER_LIST.rawValue)
        let id = gst_pad_add_probe(pad, mask, { _, info, data in
            guard let info, let data else { return GST_PAD_PROBE_OK }
            let box = Unmanaged<TimestampAdvanceBox>.fromOpaque(data).takeUnretainedValue()
            box.received()
            ecv_probe_info_advance_timestamps(info, GstClockTime(box.nanoseconds))
            return GST_PAD_PROBE_OK
        }, box, ProbeHandlerBox.release)
        return PadProbe(pad: raw, id: id, life: advanceBox.life)
    }
}
