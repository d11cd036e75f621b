internal import CGLibShims
internal import CGStreamer
internal import CGStreamerShims
import GLibCore
import Synchronization

/// What a buffer probe sees of a buffer: timing and size, without touching the data.
package struct BufferInfo: Sendable {
    package var pts: UInt64?
    package var dts: UInt64?
    package var duration: UInt64?
    package var size: Int
    package var isKeyFrame: Bool
}

/// What a probe tells GStreamer to do with the buffer.
package enum ProbeDecision: Sendable {
    case pass, drop, remove
}

/// Whether GStreamer still holds a probe: cleared by the probe's destroy notify, which runs when
/// the probe goes by either road (`cancel()`, or the handler answering `.remove`), so a cancel
/// after a self-removal does not ask the pad to remove an id it no longer has.
final class ProbeLife: Sendable {
    private let removed = Atomic(false)
    func markRemoved() { removed.store(true, ordering: .releasing) }
    var isRemoved: Bool { removed.load(ordering: .acquiring) }
}

/// What every probe hands GStreamer as its user data: the handler (a subclass's) and whether
/// GStreamer still holds the probe.
// @unchecked Sendable: `life` is itself Sendable; subclasses hold only `let` fields set in init,
// before `published()` (see `HandOffBox`).
class ProbeHandlerBox: HandOffBox, @unchecked Sendable {
    let life = ProbeLife()

    /// Every probe's destroy notify: the probe is gone (by `cancel()` or by its handler's
    /// `.remove`), and GStreamer's reference to the box goes with it.
    static let release: GDestroyNotify = { data in
        let box = Unmanaged<ProbeHandlerBox>.fromOpaque(data!)
        box.takeUnretainedValue().life.markRemoved()
        box.release()
    }
}

/// An installed pad probe; removed on `cancel()` or when the token goes.
package final class PadProbe: Sendable {
    // @unchecked Sendable: GWeakRef is thread-safe; the allocation is owned here and freed in deinit.
    private struct WeakPad: @unchecked Sendable { let ref: UnsafeMutablePointer<GWeakRef> }
    private let pad: WeakPad
    private let probeID: Mutex<gulong>
    private let life: ProbeLife

    init(pad: UnsafeMutableRawPointer, id: gulong, life: ProbeLife) {
        let ref = UnsafeMutablePointer<GWeakRef>.allocate(capacity: 1)
        ref.initialize(to: GWeakRef())
        g_weak_ref_init(ref, pad)
        self.pad = WeakPad(ref: ref)
        probeID = Mutex(id)
        self.life = life
    }

    package func cancel() {
        let id = probeID.withLock { id in defer { id = 0 }; return id }
        guard id != 0, !life.isRemoved, let pad = g_weak_ref_get(pad.ref) else { return }
        gst_pad_remove_probe(pad.assumingMemoryBound(to: GstPad.self), id)
        g_object_unref(pad)
    }

    deinit {
        cancel()
        g_weak_ref_clear(pad.ref)
        pad.ref.deallocate()
    }
}

// @unchecked Sendable: only `let` fields of Sendable types, set in init before `published()` (see `HandOffBox`).
final class ProbeBox: ProbeHandlerBox, @unchecked Sendable {
    let handler: @Sendable (BufferInfo, UnsafeRawBufferPointer?) -> ProbeDecision
    let readsData: Bool
    init(handler: @escaping @Sendable (BufferInfo, UnsafeRawBufferPointer?) -> ProbeDecision, readsData: Bool) {
        self.handler = handler
        self.readsData = readsData
    }
}

extension Pad {
    /// Calls `handler` on the streaming thread for every buffer that crosses the pad, including
    /// each buffer of a buffer list (RTP payloaders push lists). With `readingData`, the buffer's
    /// bytes are mapped read-only for the call. A `.drop` or `.remove` from any buffer of a list
    /// applies to the whole list.
    package func addBufferProbe(readingData: Bool = false,
                               _ handler: @escaping @Sendable (BufferInfo, UnsafeRawBufferPointer?) -> ProbeDecision) -> PadProbe {
        let probeBox = ProbeBox(handler: handler, readsData: readingData).published()
        let box = Unmanaged.passRetained(probeBox).toOpaque()
        let mask = GstPadProbeType(GST_PAD_PROBE_TYPE_BUFFER.rawValue | GST_PAD_PROBE_TYPE_BUFFER_LIST.rawValue)
        let id = gst_pad_add_probe(pad, mask, { _, info, data in
            guard let info, let data else { return GST_PAD_PROBE_OK }
            let box = Unmanaged<ProbeBox>.fromOpaque(data).takeUnretainedValue()
            box.received()
            var decision = ProbeDecision.pass
            if let buffer = ecv_probe_info_buffer(info) {
                decision = Pad.inspect(buffer, box)
            } else if let list = ecv_probe_info_buffer_list(info) {
                for index in 0..<gst_buffer_list_length(list) {
                    guard let buffer = gst_buffer_list_get(list, index) else { continue }
                    let verdict = Pad.inspect(buffer, box)
                    if verdict != .pass { decision = verdict }
                }
            }
            return decision.probeReturn
        }, box, ProbeHandlerBox.release)
        return PadProbe(pad: raw, id: id, life: probeBox.life)
    }

    private static func inspect(_ buffer: UnsafeMutablePointer<GstBuffer>, _ box: ProbeBox) -> ProbeDecision {
        let info = BufferInfo(
            pts: Sample.clockTime(buffer.pointee.pts), dts: Sample.clockTime(buffer.pointee.dts),
            duration: Sample.clockTime(buffer.pointee.duration), size: Int(gst_buffer_get_size(buffer)),
            isKeyFrame: ecv_buffer_is_delta_unit(buffer) == 0)
        guard box.readsData else { return box.handler(info, nil) }
        var map = GstMapInfo()
        guard gst_buffer_map(buffer, &map, GST_MAP_READ) != 0 else { return box.handler(info, nil) }
        defer { gst_buffer_unmap(buffer, &map) }
        return box.handler(info, UnsafeRawBufferPointer(start: map.data, count: Int(map.size)))
    }
}

// @unchecked Sendable: only `let` fields of Sendable types, set in init before `published()` (see `HandOffBox`).
final class CapsProbeBox: ProbeHandlerBox, @unchecked Sendable {
    let handler: @Sendable (Caps) -> ProbeDecision
    init(handler: @escaping @Sendable (Caps) -> ProbeDecision) { self.handler = handler }
}

extension ProbeDecision {
    var probeReturn: GstPadProbeReturn {
        switch self {
        case .pass: GST_PAD_PROBE_OK
        case .drop: GST_PAD_PROBE_DROP
        case .remove: GST_PAD_PROBE_REMOVE
        }
    }
}

extension Pad {
    /// Calls `handler` on the streaming thread for every caps event that crosses the pad
    /// downstream; `.drop` keeps the event from going on (the pad keeps its current caps).
    package func addCapsProbe(_ handler: @escaping @Sendable (Caps) -> ProbeDecision) -> PadProbe {
        let capsBox = CapsProbeBox(handler: handler).published()
        let box = Unmanaged.passRetained(capsBox).toOpaque()
        let id = gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM, { _, info, data in
            guard let info, let data, let event = ecv_probe_info_event(info), event.pointee.type == GST_EVENT_CAPS else {
                return GST_PAD_PROBE_OK
            }
            var pointer: UnsafeMutablePointer<GstCaps>?
            gst_event_parse_caps(event, &pointer)
            guard let pointer else { return GST_PAD_PROBE_OK }
            let box = Unmanaged<CapsProbeBox>.fromOpaque(data).takeUnretainedValue()
            box.received()
            return box.handler(Caps(borrowing: pointer)).probeReturn
        }, box, ProbeHandlerBox.release)
        return PadProbe(pad: raw, id: id, life: capsBox.life)
    }
}
