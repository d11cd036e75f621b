internal import CGLibShims
internal import CGStreamer
internal import CGStreamerShims
import GLibCore

/// Bytes to write over part of a buffer: `bytes` at `offset`.
package struct BufferPatch: Sendable, Equatable {
    package var offset: Int
    package var bytes: [UInt8]

    package init(offset: Int, bytes: [UInt8]) {
        self.offset = offset
        self.bytes = bytes
    }
}

// @unchecked Sendable: only `let` fields of Sendable types, set in init before `published()` (see `HandOffBox`).
final class BufferPatchBox: ProbeHandlerBox, @unchecked Sendable {
    let handler: @Sendable (UnsafeRawBufferPointer) -> [BufferPatch]
    init(handler: @escaping @Sendable (UnsafeRawBufferPointer) -> [BufferPatch]) { self.handler = handler }
}

extension Pad {
    /// Calls `handler` on the streaming thread with the bytes of every buffer (not buffer list)
    /// that crosses the pad, mapped read-only, and writes the patches it returns over the buffer
    /// (a copy when the buffer is shared) before it goes on. No patch: the buffer is untouched.
    /// A patch beyond the buffer's end is not written. For packets a receiver must see changed
    /// (an RTCP report's fields), never for media, whose buffers come in lists.
    package func addBufferPatchProbe(_ handler: @escaping @Sendable (UnsafeRawBufferPointer) -> [BufferPatch]) -> PadProbe {
        let patchBox = BufferPatchBox(handler: handler).published()
        let box = Unmanaged.passRetained(patchBox).toOpaque()
        let id = gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_BUFFER, { _, info, data in
            guard let info, let data, let buffer = ecv_probe_info_buffer(info) else { return GST_PAD_PROBE_OK }
            let box = Unmanaged<BufferPatchBox>.fromOpaque(data).takeUnretainedValue()
            box.received()
            var map = GstMapInfo()
            guard gst_buffer_map(buffer, &map, GST_MAP_READ) != 0 else { return GST_PAD_PROBE_OK }
            let patches = box.handler(UnsafeRawBufferPointer(start: map.data, count: Int(map.size)))
            gst_buffer_unmap(buffer, &map)
            for patch in patches where patch.offset >= 0 && !patch.bytes.isEmpty {
                _ = patch.bytes.withUnsafeBufferPointer { bytes in
                    ecv_probe_info_patch_buffer(info, gsize(patch.offset), bytes.baseAddress, gsize(bytes.count))
                }
            }
            return GST_PAD_PROBE_OK
        }, box, ProbeHandlerBox.release)
        return PadProbe(pad: raw, id: id, life: patchBox.life)
    }
}
