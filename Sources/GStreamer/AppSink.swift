internal import CGStreamer
import GLibCore

/// An `appsink`: delivers decoded or encoded samples to Swift.
package final class AppSink: Element, @unchecked Sendable {
    // @unchecked Sendable: adds no stored state; callbacks are installed through GStreamer's
    // thread-safe gst_app_sink_set_callbacks.

    var appSink: UnsafeMutablePointer<GstAppSink> { raw.assumingMemoryBound(to: GstAppSink.self) }

    /// Creates an appsink; `caps` restricts what it accepts (e.g. `video/x-raw,format=RGBA`).
    package convenience init(name: String? = nil, caps: Caps? = nil, sync: Bool = false, maxBuffers: UInt = 2, drop: Bool = true)
        throws(GStreamerError) {
        GStreamerRuntime.require()
        guard let created = gst_element_factory_make("appsink", name) else { throw .elementNotFound(factory: "appsink") }
        self.init(UnsafeMutableRawPointer(created), .floating)
        if let caps { gst_app_sink_set_caps(appSink, caps.pointer) }
        try set("sync", sync)
        try set("max-buffers", maxBuffers)
        try set("drop", drop)
    }

    /// Wraps an `appsink` found in a parsed pipeline.
    package convenience init(_ element: Element) throws(GStreamerError) {
        guard element.factoryName == "appsink" else {
            throw .notSupported("\(element.diagnosticName) is not an appsink")
        }
        self.init(element.raw, .borrowed)
    }

    /// Calls `handler` on the streaming thread for every sample; `onEndOfStream` when the stream ends.
    /// Replaces any previous handler. Handlers must not block: copy what you need and return.
    package func setSampleHandler(_ handler: @escaping @Sendable (Sample) -> Void,
                                 onEndOfStream: (@Sendable () -> Void)? = nil) {
        var callbacks = GstAppSinkCallbacks()
        callbacks.new_sample = { sink, data in
            guard let sink, let data, let sample = gst_app_sink_pull_sample(sink) else { return GST_FLOW_EOS }
            let box = Unmanaged<SampleHandlerBox>.fromOpaque(data).takeUnretainedValue()
            box.received()
            box.handler(Sample(owning: sample))
            return GST_FLOW_OK
        }
        callbacks.eos = { _, data in
            guard let data else { return }
            let box = Unmanaged<SampleHandlerBox>.fromOpaque(data).takeUnretainedValue()
            box.received()
            box.onEndOfStream?()
        }
        let box = Unmanaged.passRetained(SampleHandlerBox(handler: handler, onEndOfStream: onEndOfStream).published()).toOpaque()
        gst_app_sink_set_callbacks(appSink, &callbacks, box) { data in
            Unmanaged<SampleHandlerBox>.fromOpaque(data!).release()
        }
    }

    /// The samples as an async sequence. A consumer that falls behind loses the oldest samples
    /// (`bufferingNewest`), so the streaming thread never waits for Swift.
    package func samples(bufferingNewest limit: Int = 8) -> AsyncStream<Sample> {
        let (stream, continuation) = AsyncStream.makeStream(of: Sample.self, bufferingPolicy: .bufferingNewest(limit))
        setSampleHandler({ continuation.yield($0) }, onEndOfStream: { continuation.finish() })
        return stream
    }
}

// @unchecked Sendable: only `let` fields of Sendable types, set in init before `published()` (see `HandOffBox`).
private final class SampleHandlerBox: HandOffBox, @unchecked Sendable {
    let handler: @Sendable (Sample) -> Void
    let onEndOfStream: (@Sendable () -> Void)?
    init(handler: @escaping @Sendable (Sample) -> Void, onEndOfStream: (@Sendable () -> Void)?) {
        self.handler = handler
        self.onEndOfStream = onEndOfStream
    }
}
