internal import CGStreamer

/// An `appsrc`: lets Swift push frames or samples into a pipeline with its own timestamps.
package final class AppSource: Element, @unchecked Sendable {
    // @unchecked Sendable: adds no stored state; gst_app_src_push_buffer is thread-safe.

    var appSource: UnsafeMutablePointer<GstAppSrc> { raw.assumingMemoryBound(to: GstAppSrc.self) }

    /// Creates a time-format appsrc for `caps`. With `block` false a full queue drops nothing but
    /// makes `push` throw, so a producer never stalls silently.
    package convenience init(name: String? = nil, caps: Caps, isLive: Bool = true, maxBytes: UInt64 = 0, block: Bool = false)
        throws(GStreamerError) {
        GStreamerRuntime.require()
        guard let created = gst_element_factory_make("appsrc", name) else { throw .elementNotFound(factory: "appsrc") }
        self.init(UnsafeMutableRawPointer(created), .floating)
        try configure(caps: caps, isLive: isLive, maxBytes: maxBytes, block: block)
    }

    /// Wraps an `appsrc` found in a parsed pipeline.
    package convenience init(_ element: Element) throws(GStreamerError) {
        guard element.factoryName == "appsrc" else { throw .notSupported("\(element.diagnosticName) is not an appsrc") }
        self.init(element.raw, .borrowed)
    }

    package func configure(caps: Caps, isLive: Bool = true, maxBytes: UInt64 = 0, block: Bool = false) throws(GStreamerError) {
        gst_app_src_set_caps(appSource, caps.pointer)
        try set("format", "time")
        try set("is-live", isLive)
        try set("block", block)
        if maxBytes > 0 { try set("max-bytes", maxBytes) }
    }

    /// Pushes one buffer. `pts`/`duration` are in nanoseconds of running time.
    package func push(_ bytes: UnsafeRawBufferPointer, pts: UInt64?, duration: UInt64?) throws(GStreamerError) {
        guard let buffer = gst_buffer_new_allocate(nil, gsize(bytes.count), nil) else {
            throw .flow(element: diagnosticName, result: "cannot allocate \(bytes.count) bytes")
        }
        if let base = bytes.baseAddress, bytes.count > 0 {
            gst_buffer_fill(buffer, 0, base, gsize(bytes.count))
        }
        buffer.pointee.pts = pts.map { GstClockTime($0) } ?? GstClockTime(UInt64.max)
        buffer.pointee.duration = duration.map { GstClockTime($0) } ?? GstClockTime(UInt64.max)
        try push(owned: buffer)
    }

    /// Pushes the bytes of `sample` without copying them: a new buffer that shares the sample's
    /// memory (buffers are immutable once shared), stamped `pts`, with none of the original's
    /// flags, times or metadata. What a recorder does with every packet of a call.
    package func push(_ sample: Sample, pts: UInt64?) throws(GStreamerError) {
        guard let original = sample.buffer else { return }
        guard let buffer = gst_buffer_copy_region(original, GST_BUFFER_COPY_MEMORY, 0, gsize.max) else {
            throw .flow(element: diagnosticName, result: "cannot share a buffer of \(sample.size) bytes")
        }
        buffer.pointee.pts = pts.map { GstClockTime($0) } ?? GstClockTime(UInt64.max)
        try push(owned: buffer)
    }

    /// Hands `buffer` (and our reference to it) to the appsrc.
    private func push(owned buffer: UnsafeMutablePointer<GstBuffer>) throws(GStreamerError) {
        let result = gst_app_src_push_buffer(appSource, buffer) // takes ownership of the buffer
        guard result == GST_FLOW_OK else {
            throw .flow(element: diagnosticName, result: String(cString: gst_flow_get_name(result)))
        }
    }

    package func push(_ bytes: [UInt8], pts: UInt64?, duration: UInt64?) throws(GStreamerError) {
        let failure = bytes.withUnsafeBytes { buffer -> GStreamerError? in
            do throws(GStreamerError) { try push(buffer, pts: pts, duration: duration); return nil } catch { return error }
        }
        if let failure { throw failure }
    }

    /// Signals that no more data will come.
    package func endOfStream() {
        gst_app_src_end_of_stream(appSource)
    }
}
