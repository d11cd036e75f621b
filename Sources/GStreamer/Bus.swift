internal import CGStreamer
import Synchronization

/// Delivers a pipeline's bus messages to any number of Swift subscribers.
///
/// A GLib bus watch runs on the library's main loop (never on a streaming thread); each message
/// is converted once and yielded to every subscriber's buffer, so a slow subscriber never blocks
/// GStreamer. Waiters for a state or EOS are served from the same watch.
final class BusDispatcher: Sendable {
    private struct Subscribers {
        var next = 0
        var streams: [Int: AsyncStream<BusMessage>.Continuation] = [:]
        var observers: [Int: @Sendable (BusMessage) -> Void] = [:]
        var lastError: BusMessage.ErrorInfo?
        /// The run's first error: what ended it. Later errors are usually its consequences (a
        /// source's not-linked flow error after the failed link that caused it).
        var firstErrorOfRun: BusMessage.ErrorInfo?
        var reachedEndOfStream = false
        var finished = false
    }

    private let state = Mutex(Subscribers())
    // @unchecked Sendable: the watch id is written once on the main loop before any reader and
    // only read again in `stop()`, which also runs on the main loop.
    private struct WatchID: @unchecked Sendable { var id: guint = 0 }
    private let watch = Mutex(WatchID())

    /// Installs the watch on `bus` for messages from `pipeline`.
    func start(bus: UnsafeMutablePointer<GstBus>, pipeline: UnsafeMutableRawPointer) {
        let context = Unmanaged.passRetained(WatchContext(dispatcher: self, pipeline: pipeline)).toOpaque()
        let id = gst_bus_add_watch_full(bus, G_PRIORITY_DEFAULT, { _, message, data in
            let context = Unmanaged<WatchContext>.fromOpaque(data!).takeUnretainedValue()
            guard let message else { return 1 }
            // A live pipeline's latency changes as elements learn theirs (jitter buffers,
            // encoders); GStreamer asks the application to redistribute it.
            if message.pointee.type == GST_MESSAGE_LATENCY {
                gst_bin_recalculate_latency(context.pipeline.assumingMemoryBound(to: GstBin.self))
            }
            context.dispatcher.dispatch(BusMessage(message, pipeline: context.pipeline))
            return 1 // G_SOURCE_CONTINUE
        }, context, { data in
            Unmanaged<WatchContext>.fromOpaque(data!).release()
        })
        watch.withLock { $0.id = id }
        gst_bus_set_sync_handler(bus, { _, message, pipeline in
            guard let message, !BusDispatcher.reachesTheMainLoop(message, pipeline: pipeline) else { return GST_BUS_PASS }
            gst_message_unref(message) // a sync handler that drops a message owns it
            return GST_BUS_DROP
        }, pipeline, nil)
    }

    /// Whether a message is worth the main loop's time: not a child's state change (only the
    /// pipeline's own are read) and not a streaming thread's start or end (stream-status).
    ///
    /// Why at the bus, on the posting thread: a call's set-up posts thousands of both, and turning
    /// each into a `BusMessage` walks the source's parents taking their object locks, which
    /// streaming threads hold often: gdb found the main loop waiting there in 4 of 6 samples with
    /// 200 calls in one process (cost benchmark). The bin has handled a child's state change
    /// before its message reaches the bus.
    static func reachesTheMainLoop(_ message: UnsafeMutablePointer<GstMessage>, pipeline: UnsafeMutableRawPointer?) -> Bool {
        switch message.pointee.type {
        case GST_MESSAGE_STATE_CHANGED: UnsafeMutableRawPointer(message.pointee.src) == pipeline
        case GST_MESSAGE_STREAM_STATUS: false
        default: true
        }
    }

    /// Removes the watch and finishes every subscriber's stream.
    func stop(bus: UnsafeMutablePointer<GstBus>) {
        gst_bus_remove_watch(bus)
        let streams = state.withLock { state -> [AsyncStream<BusMessage>.Continuation] in
            state.finished = true
            state.observers.removeAll()
            defer { state.streams.removeAll() }
            return Array(state.streams.values)
        }
        for stream in streams { stream.finish() }
    }

    private func dispatch(_ message: BusMessage) {
        let (streams, observers) = state.withLock { state in
            switch message {
            case .error(let info):
                state.lastError = info
                if state.firstErrorOfRun == nil { state.firstErrorOfRun = info }
            case .endOfStream: state.reachedEndOfStream = true
            default: break
            }
            return (Array(state.streams.values), Array(state.observers.values))
        }
        for observer in observers { observer(message) }
        for stream in streams { stream.yield(message) }
    }

    var lastError: BusMessage.ErrorInfo? { state.withLock { $0.lastError } }

    /// The end of the current run: EOS or the first error, whichever was dispatched.
    var outcomeOfRun: Result<Bool, BusMessage.ErrorInfo> {
        state.withLock { state in
            if let error = state.firstErrorOfRun { return .failure(error) }
            return .success(state.reachedEndOfStream)
        }
    }

    /// Forgets EOS and errors of the previous run; called when the pipeline is reset to READY/NULL.
    func resetRun() {
        state.withLock { state in
            state.lastError = nil
            state.firstErrorOfRun = nil
            state.reachedEndOfStream = false
        }
    }

    func makeStream(bufferingNewest limit: Int?) -> AsyncStream<BusMessage> {
        let (stream, continuation) = AsyncStream.makeStream(
            of: BusMessage.self, bufferingPolicy: limit.map { .bufferingNewest($0) } ?? .unbounded)
        let id: Int? = state.withLock { state in
            guard !state.finished else { return nil }
            state.next += 1
            state.streams[state.next] = continuation
            return state.next
        }
        guard let id else { continuation.finish(); return stream }
        continuation.onTermination = { [weak self] _ in
            self?.state.withLock { _ = $0.streams.removeValue(forKey: id) }
        }
        return stream
    }

    /// Adds a synchronous observer called on the main loop for each message; returns its key.
    func addObserver(_ observer: @escaping @Sendable (BusMessage) -> Void) -> Int {
        state.withLock { state in
            state.next += 1
            state.observers[state.next] = observer
            return state.next
        }
    }

    func removeObserver(_ key: Int) {
        state.withLock { _ = $0.observers.removeValue(forKey: key) }
    }
}

private final class WatchContext {
    let dispatcher: BusDispatcher
    let pipeline: UnsafeMutableRawPointer
    init(dispatcher: BusDispatcher, pipeline: UnsafeMutableRawPointer) {
        self.dispatcher = dispatcher
        self.pipeline = pipeline
    }
}
