internal import CGLibShims
internal import CGStreamer
internal import CGStreamerShims
import GLibCore
import Dispatch

/// A top-level pipeline: owns its bus watch and its state, and goes to NULL when released.
package final class Pipeline: Bin, @unchecked Sendable {
    // @unchecked Sendable re-stated for the subclass: the dispatcher is itself Sendable and the
    // only stored state; everything else is the thread-safe GstPipeline.
    private let dispatcher = BusDispatcher()

    /// An empty pipeline to add elements to.
    package convenience init(name: String? = nil) {
        GStreamerRuntime.require()
        self.init(UnsafeMutableRawPointer(gst_pipeline_new(name)!), .floating)
        startBusWatch()
    }

    /// Builds a pipeline from gst-launch syntax. A bad element or link throws `parseFailed`
    /// carrying GStreamer's own message, which names the element.
    package convenience init(launch description: String) throws(GStreamerError) {
        GStreamerRuntime.require()
        var error: UnsafeMutablePointer<GError>?
        let parsed = gst_parse_launch_full(description, nil, GST_PARSE_FLAG_FATAL_ERRORS, &error)
        if let message = takeErrorMessage(error) {
            if let parsed { gst_object_unref(parsed) }
            throw .parseFailed(launch: description, message: message)
        }
        guard let parsed else { throw .parseFailed(launch: description, message: "empty description") }
        if g_type_is_a(ecv_object_type(parsed), gst_pipeline_get_type()) != 0 {
            self.init(UnsafeMutableRawPointer(parsed), .floating)
        } else {
            // A single element parses to itself; wrap it so the caller always gets a pipeline.
            let pipeline = gst_pipeline_new(nil)!
            gst_bin_add(UnsafeMutableRawPointer(pipeline).assumingMemoryBound(to: GstBin.self), parsed)
            self.init(UnsafeMutableRawPointer(pipeline), .floating)
        }
        startBusWatch()
    }

    required init(_ pointer: UnsafeMutableRawPointer, _ ownership: Ownership) {
        super.init(pointer, ownership)
    }

    private func startBusWatch() {
        let bus = gst_element_get_bus(element)!
        defer { gst_object_unref(bus) }
        dispatcher.start(bus: bus, pipeline: raw)
    }

    deinit {
        // Subscribers hear the end now; messages the pipeline posts from here on stay on the bus
        // until it is flushed below.
        let bus = gst_element_get_bus(element)
        if let bus { dispatcher.stop(bus: bus) }
        let teardown = PipelineTeardown(element: element, bus: bus)
        if teardown.isIdle {
            teardown.run() // nothing runs: no thread to stop, nothing to wait for
        } else {
            PipelineTeardown.queue.async { teardown.run() }
        }
    }

    /// While flushing, the bus drops every message posted to it (and those queued). Used around
    /// removing a bin whose teardown messages would otherwise keep its internals alive.
    package func setBusFlushing(_ flushing: Bool) {
        guard let bus = gst_element_get_bus(element) else { return }
        gst_bus_set_flushing(bus, flushing ? 1 : 0)
        gst_object_unref(bus)
    }

    // MARK: Messages

    /// The pipeline's bus messages from now on. With `bufferingNewest`, a subscriber that falls
    /// behind loses the oldest messages instead of growing without bound.
    package func messages(bufferingNewest limit: Int? = nil) -> AsyncStream<BusMessage> {
        dispatcher.makeStream(bufferingNewest: limit)
    }

    /// The most recent ERROR message seen on the bus.
    package var lastError: BusMessage.ErrorInfo? { dispatcher.lastError }

    /// Calls `observer` on the main loop for every message until the returned token is cancelled.
    package func observeMessages(_ observer: @escaping @Sendable (BusMessage) -> Void) -> BusObservation {
        BusObservation(dispatcher: dispatcher, key: dispatcher.addObserver(observer))
    }

    // MARK: State

    /// Changes state and waits until the pipeline has reached it. An ERROR posted during the change
    /// is thrown; so is a transition that does not complete within `timeout`.
    package func setState(_ target: State, timeout: Duration = .seconds(10)) async throws(GStreamerError) {
        if target <= .ready {
            guard requestState(target) else {
                throw .stateChangeFailed(element: diagnosticName, target: target.description, reason: lastError?.description ?? "refused")
            }
            dispatcher.resetRun()
            return
        }
        let outcome = OneShot<Void, GStreamerError>()
        let observation = observeMessages { [diagnosticName] message in
            switch message {
            case .stateChanged(_, _, let new, let pending, true) where new == target && pending == .voidPending:
                outcome.resolve(.success(()))
            case .error(let info):
                outcome.resolve(.failure(.stateChangeFailed(element: diagnosticName, target: target.description, reason: info.description)))
            default:
                break
            }
        }
        defer { observation.cancel() }
        let result = gst_element_set_state(element, target.native)
        switch result {
        case GST_STATE_CHANGE_FAILURE:
            // The reason is on the bus and arrives with the next dispatch; give it a moment.
            let timer = MainLoop.shared.schedule(after: .milliseconds(500)) { [diagnosticName] in
                outcome.resolve(.failure(.stateChangeFailed(element: diagnosticName, target: target.description, reason: "refused")))
            }
            defer { timer.cancel() }
            do { try await outcome.value() } catch { throw error }
            throw .stateChangeFailed(element: diagnosticName, target: target.description, reason: "refused")
        case GST_STATE_CHANGE_SUCCESS, GST_STATE_CHANGE_NO_PREROLL:
            if currentState == target { return }
            fallthrough
        default:
            let timer = MainLoop.shared.schedule(after: timeout) { [diagnosticName] in
                outcome.resolve(.failure(.timedOut(operation: "\(diagnosticName) -> \(target)", seconds: timeout.seconds)))
            }
            defer { timer.cancel() }
            try await outcome.value()
        }
    }

    /// Starts playback and waits until the pipeline plays.
    package func play(timeout: Duration = .seconds(10)) async throws(GStreamerError) {
        try await setState(.playing, timeout: timeout)
    }

    /// Stops the pipeline synchronously (NULL state).
    package func stop() {
        gst_element_set_state(element, GST_STATE_NULL)
        dispatcher.resetRun()
    }

    /// Waits for end-of-stream of the current run (also when it was reached before this call);
    /// throws the run's first ERROR instead, or a timeout.
    package func waitForEndOfStream(timeout: Duration = .seconds(30)) async throws(GStreamerError) {
        let outcome = OneShot<Void, GStreamerError>()
        let observation = observeMessages { message in
            switch message {
            case .endOfStream: outcome.resolve(.success(()))
            case .error(let info): outcome.resolve(.failure(.flow(element: info.source, result: info.description)))
            default: break
            }
        }
        defer { observation.cancel() }
        switch dispatcher.outcomeOfRun {
        case .success(true): outcome.resolve(.success(()))
        case .failure(let info): outcome.resolve(.failure(.flow(element: info.source, result: info.description)))
        case .success(false): break
        }
        let timer = MainLoop.shared.schedule(after: timeout) {
            outcome.resolve(.failure(.timedOut(operation: "waiting for end-of-stream", seconds: timeout.seconds)))
        }
        defer { timer.cancel() }
        try await outcome.value()
    }

    /// The pipeline's configured latency, after it has been computed.
    package var latency: Duration {
        .nanoseconds(Int64(bitPattern: UInt64(gst_pipeline_get_latency(raw.assumingMemoryBound(to: GstPipeline.self)))))
    }
}

/// The last of a pipeline: NULL, which stops its streaming threads before the elements are
/// released, then the bus flushed (messages still queued would keep their sources alive).
///
/// NULL is a synchronous transition that joins every streaming thread, so where it runs matters,
/// and the last reference can go anywhere. On a streaming thread of the same pipeline (an appsink
/// or pad-probe callback dropping it) the transition waits for that thread to leave its loop,
/// which it never does while it waits: deadlock. On the main loop, the loop stalls while elements
/// join their threads (webrtcbin, libnice and encoders take hundreds of milliseconds), and a
/// streaming thread waiting for the loop meanwhile (a bus post with a sync handler, a callback
/// hopping there) deadlocks it. So a pipeline that may still run is torn down on `queue`: a
/// serial queue of libdispatch threads, which are neither, in the order pipelines were dropped.
/// It holds its own references until done, so the GstPipeline outlives its Swift wrapper by that
/// long. A pipeline already at NULL with no change pending has no thread to stop and is released
/// on the spot, as `stop()` followed by the last release always was.
// @unchecked Sendable: owned references to a GstElement and a GstBus, used once, by `run`; both
// are thread-safe GStreamer objects.
private struct PipelineTeardown: @unchecked Sendable {
    static let queue = DispatchQueue(label: "ecv.pipeline-teardown")

    private let element: UnsafeMutablePointer<GstElement>
    private let bus: UnsafeMutablePointer<GstBus>?

    /// Takes a reference to `element`, and adopts `bus` (transfer full).
    init(element: UnsafeMutablePointer<GstElement>, bus: UnsafeMutablePointer<GstBus>?) {
        gst_object_ref(element)
        self.element = element
        self.bus = bus
    }

    /// At NULL and not changing state: no streaming thread exists. Never blocks (timeout 0).
    var isIdle: Bool {
        var current = GST_STATE_VOID_PENDING, pending = GST_STATE_VOID_PENDING
        return gst_element_get_state(element, &current, &pending, 0) == GST_STATE_CHANGE_SUCCESS
            && current == GST_STATE_NULL && pending == GST_STATE_VOID_PENDING
    }

    func run() {
        gst_element_set_state(element, GST_STATE_NULL)
        if let bus {
            gst_bus_set_flushing(bus, 1)
            gst_object_unref(bus)
        }
        gst_object_unref(element)
    }
}

/// A registration of a bus observer; cancel it (or drop it) to stop observing.
package final class BusObservation: Sendable {
    private let dispatcher: BusDispatcher
    private let key: Int
    init(dispatcher: BusDispatcher, key: Int) {
        self.dispatcher = dispatcher
        self.key = key
    }
    package func cancel() { dispatcher.removeObserver(key) }
    deinit { cancel() }
}
