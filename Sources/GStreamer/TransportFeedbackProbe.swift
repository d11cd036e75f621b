internal import CGLibShims
internal import CGStreamer
internal import CGStreamerShims
import GLibCore

/// One packet of the far end's transport-wide feedback: when we sent it and when it arrived there,
/// each on its own side's clock (so only differences of the one-way delay mean anything).
package struct TransportFeedbackPacket: Sendable, Equatable {
    /// Our running time when rtpsession sent it, nanoseconds.
    package var sentNanoseconds: UInt64
    /// The far end's arrival time, nanoseconds on its clock; nil when it did not arrive.
    package var arrivedNanoseconds: UInt64?
    /// The RTP packet's size, bytes.
    package var size: Int

    package init(sentNanoseconds: UInt64, arrivedNanoseconds: UInt64?, size: Int) {
        self.sentNanoseconds = sentNanoseconds
        self.arrivedNanoseconds = arrivedNanoseconds
        self.size = size
    }
}

// @unchecked Sendable: only `let` fields of Sendable types, set in init before `published()` (see `HandOffBox`).
final class TransportFeedbackBox: ProbeHandlerBox, @unchecked Sendable {
    let handler: @Sendable ([TransportFeedbackPacket]) -> Void
    init(handler: @escaping @Sendable ([TransportFeedbackPacket]) -> Void) { self.handler = handler }
}

extension Pad {
    /// The most packets one feedback message is read for: GStreamer's own feedback covers a
    /// frame's packets, libwebrtc's 50–100 ms of them; a longer message keeps its first ones.
    static let transportFeedbackCapacity = 512

    /// Calls `handler` with every transport-wide feedback message rtpsession parses (the
    /// `RTPTWCCPackets` event it pushes upstream toward the send path, one per feedback: the
    /// per-packet times its `twcc-stats` only average), on rtpsession's RTCP thread; the event
    /// goes on untouched.
    package func addTransportFeedbackProbe(_ handler: @escaping @Sendable ([TransportFeedbackPacket]) -> Void) -> PadProbe {
        let feedbackBox = TransportFeedbackBox(handler: handler).published()
        let box = Unmanaged.passRetained(feedbackBox).toOpaque()
        let id = gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_EVENT_UPSTREAM, { _, info, data in
            guard let info, let data, let event = ecv_probe_info_event(info), ecv_event_type(event) == GST_EVENT_CUSTOM_UPSTREAM,
                  let structure = gst_event_get_structure(event) else { return GST_PAD_PROBE_OK }
            // Buffers for this message's packets only: it runs for every feedback message.
            let capacity = min(Pad.transportFeedbackCapacity, Int(ecv_twcc_packets_count(structure)))
            guard capacity > 0 else { return GST_PAD_PROBE_OK }
            var sent = [guint64](repeating: 0, count: capacity), arrived = [guint64](repeating: 0, count: capacity)
            var sizes = [guint](repeating: 0, count: capacity)
            let count = Int(ecv_twcc_packets_read(structure, &sent, &arrived, &sizes, guint(capacity)))
            guard count > 0 else { return GST_PAD_PROBE_OK }
            let packets = (0..<count).map { index in
                TransportFeedbackPacket(sentNanoseconds: UInt64(sent[index]),
                                        arrivedNanoseconds: arrived[index] == guint64.max ? nil : UInt64(arrived[index]),
                                        size: Int(sizes[index]))
            }
            let box = Unmanaged<TransportFeedbackBox>.fromOpaque(data).takeUnretainedValue()
            box.received()
            box.handler(packets)
            return GST_PAD_PROBE_OK
        }, box, ProbeHandlerBox.release)
        return PadProbe(pad: raw, id: id, life: feedbackBox.life)
    }
}
