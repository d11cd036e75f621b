internal import CGLibShims
internal import CGStreamer
internal import CGStreamerShims
import GLibCore

/// A top-level pipeline: owns its bus watch and its state, and goes to NULL when released.
public final class Pipeline: Bin, @unchecked Sendable {
    // @unchecked Sendable re-stated for the subclass: the dispatcher is itself Sendable and the
    // only stored state; everything else is the thread-safe GstPipeline.
    private let dispatcher = BusDispatcher()

    /// An empty pipeline to add elements to.
    public convenience init(name: String? = nil) {
        GStreamerRuntime.require()
        self.init(UnsafeMutableRawPointer(gst_pipeline_new(name)!), .floating)
        startBusWatch()
    }

    /// Builds a pipeline from gst-launch syntax. A bad element or link throws `parseFailed`
    /// carrying GStreamer's own message, which names the element.
    public convenience init(launch description: String) throws(GStreamerError) {
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
        // NULL is always a synchronous transition; it stops every streaming thread before the
        // elements are released. Messages still queued would keep their sources alive.
        gst_element_set_state(element, GST_STATE_NULL)
        if let bus = gst_element_get_bus(element) {
            dispatcher.stop(bus: bus)
            gst_bus_set_flushing(bus, 1)
            gst_object_unref(bus)
        }
    }

    /// While flushing, the bus drops every message posted to it (and those queued). Used around
    /// removing a bin whose teardown messages would otherwise keep its internals alive.
    public func setBusFlushing(_ flushing: Bool) {
        guard let bus = gst_element_get_bus(element) else { return }
        gst_bus_set_flushing(bus, flushing ? 1 : 0)
        gst_object_unref(bus)
    }

    // MARK: Messages

    /// The pipeline's bus messages from now on. With `bufferingNewest`, a subscriber that falls
    /// behind loses the oldest messages instead of growing without bound.
    public func messages(bufferingNewest limit: Int? = nil) -> AsyncStream<BusMessage> {
        dispatcher.makeStream(bufferingNewest: limit)
    }

    /// The most recent ERROR message seen on the bus.
    public var lastError: BusMessage.ErrorInfo? { dispatcher.lastError }

    /// Calls `observer` on the main loop for every message until the returned token is cancelled.
    public func observeMessages(_ observer: @escaping @Sendable (BusMessage) -> Void) -> BusObservation {
        BusObservation(dispatcher: dispatcher, key: dispatcher.addObserver(observer))
    }

    // MARK: State

    /// Changes state and waits until the pipeline has reached it. An ERROR posted during the change
    /// is thrown; so is a transition that does not complete within `timeout`.
    public func setState(_ target: State, timeout: Duration = .seconds(10)) async throws(GStreamerError) {
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
    public func play(timeout: Duration = .seconds(10)) async throws(GStreamerError) {
        try await setState(.playing, timeout: timeout)
    }

    /// Stops the pipeline synchronously (NULL state).
    public func stop() {
        gst_element_set_state(element, GST_STATE_NULL)
        dispatcher.resetRun()
    }

    /// Waits for end-of-stream of the current run (also when it was reached before this call);
    /// throws the run's first ERROR instead, or a timeout.
    public func waitForEndOfStream(timeout: Duration = .seconds(30)) async throws(GStreamerError) {
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
    public var latency: Duration {
        .nanoseconds(Int64(bitPattern: UInt64(gst_pipeline_get_latency(raw.assumingMemoryBound(to: GstPipeline.self)))))
    }
}

/// A registration of a bus observer; cancel it (or drop it) to stop observing.
public final class BusObservation: Sendable {
    private let dispatcher: BusDispatcher
    private let key: Int
    init(dispatcher: BusDispatcher, key: Int) {
        self.dispatcher = dispatcher
        self.key = key
    }
    public func cancel() { dispatcher.removeObserver(key) }
    deinit { cancel() }
}
