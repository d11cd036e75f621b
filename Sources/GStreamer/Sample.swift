internal import CGStreamer
import MediaPipeline

/// One media sample (a buffer with its caps) handed out by an appsink.
// @unchecked Sendable: holds one reference to an immutable GstSample; buffers in a pulled sample
// are read-only (only mapped with GST_MAP_READ here).
package final class Sample: @unchecked Sendable {
    let sample: OpaquePointer

    init(owning sample: OpaquePointer) { self.sample = sample }
    deinit { gst_sample_unref(sample) }

    var buffer: UnsafeMutablePointer<GstBuffer>? { gst_sample_get_buffer(sample) }

    /// The caps describing this sample's format.
    package var caps: Caps? { gst_sample_get_caps(sample).map { Caps(borrowing: $0) } }

    /// Presentation timestamp in nanoseconds, nil when unset.
    package var pts: UInt64? { buffer.flatMap { Self.clockTime($0.pointee.pts) } }
    package var dts: UInt64? { buffer.flatMap { Self.clockTime($0.pointee.dts) } }
    package var duration: UInt64? { buffer.flatMap { Self.clockTime($0.pointee.duration) } }

    /// The presentation time as running time in the sample's segment: what the pipeline's clock
    /// measures, and so comparable across streams. Most streams' pts already is, but not where an
    /// element shifts its segment: x264enc adds 1000 hours to its timestamps (and its segment) so
    /// that no DTS is negative. nil when unset or outside the segment.
    package var runningTime: UInt64? {
        guard let buffer, let pts = Self.clockTime(buffer.pointee.pts) else { return nil }
        guard let segment = gst_sample_get_segment(sample), segment.pointee.format == GST_FORMAT_TIME else { return pts }
        return Self.clockTime(gst_segment_to_running_time(segment, GST_FORMAT_TIME, guint64(pts)))
    }

    /// True for a buffer that does not depend on others (a key frame for video).
    package var isKeyFrame: Bool {
        guard let buffer else { return false }
        return buffer.pointee.mini_object.flags & GST_BUFFER_FLAG_DELTA_UNIT.rawValue == 0
    }

    package var size: Int { buffer.map { Int(gst_buffer_get_size($0)) } ?? 0 }

    /// Reads the sample's bytes without copying; the pointer is valid only inside `body`.
    package func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        guard let buffer else { return try body(UnsafeRawBufferPointer(start: nil, count: 0)) }
        var map = GstMapInfo()
        guard gst_buffer_map(buffer, &map, GST_MAP_READ) != 0 else {
            return try body(UnsafeRawBufferPointer(start: nil, count: 0))
        }
        defer { gst_buffer_unmap(buffer, &map) }
        return try body(UnsafeRawBufferPointer(start: map.data, count: Int(map.size)))
    }

    /// A copy of the sample's bytes.
    package var bytes: [UInt8] { withUnsafeBytes { Array($0) } }

    /// The raw-video layout, read from the caps (never guessed from the size).
    package var videoInfo: VideoInfo? {
        guard let caps = gst_sample_get_caps(sample) else { return nil }
        var info = GstVideoInfo()
        guard gst_video_info_from_caps(&info, caps) != 0 else { return nil }
        return VideoInfo(info)
    }

    /// A self-contained copy of a raw video sample.
    package func videoFrame() -> VideoFrame? {
        guard let info = videoInfo else { return nil }
        return VideoFrame(info: info, pts: pts, data: bytes)
    }

    static func clockTime(_ value: GstClockTime) -> UInt64? {
        value == GstClockTime(UInt64.max) ? nil : UInt64(value)
    }
}

extension VideoInfo {
    init(_ info: GstVideoInfo) {
        let planes = Int(info.finfo?.pointee.n_planes ?? 1)
        self.init(width: Int(info.width), height: Int(info.height),
                  format: info.finfo.map { String(cString: $0.pointee.name) } ?? "unknown",
                  framerate: (Int(info.fps_n), Int(info.fps_d)),
                  strides: withUnsafeBytes(of: info.stride) { raw in (0..<planes).map { Int(raw.load(fromByteOffset: $0 * MemoryLayout<gint>.stride, as: gint.self)) } },
                  offsets: withUnsafeBytes(of: info.offset) { raw in (0..<planes).map { Int(raw.load(fromByteOffset: $0 * MemoryLayout<gsize>.stride, as: gsize.self)) } },
                  size: Int(info.size))
    }
}
