internal import CSoup
internal import GLibCore

/// One request/response on the main loop: send, stream the body in, enforce the timeouts.
///
/// Every failure we decide ourselves (timeout, pin mismatch, cancellation, size limit) is recorded
/// first and then the `GCancellable` is cancelled; whichever GIO callback is pending completes with
/// CANCELLED and `finish` reports the recorded reason. All state is isolated to the main loop but
/// `result`, a thread-safe `OneShot` the caller awaits.
@MainLoopActor
final class HTTPExchange {
    private let request: HTTPRequest
    private let uri: ParsedURI
    private let connectTimeout: Duration
    private let readTimeout: Duration
    private let maxResponseBytes: Int
    private let policy: TLSPolicy
    private let sessionHolder: SessionHolder
    private let result = OneShot<HTTPResponse, HTTPError>()
    private let cancellable: OwnedGObject

    private var session: OwnedGObject?
    private var message: OwnedGObject?
    private var observer: MessageObserver?
    private var stream: OwnedGObject?
    private var connectTimer: MainLoop.Timer?
    private var ioTimer: MainLoop.Timer?
    private var connecting = false
    private var decidedFailure: HTTPError?
    private var finished = false
    private var status = 0
    private var reason = ""
    private var responseHeaders = HTTPHeaders()
    private var body: [UInt8] = []

    nonisolated init(request: HTTPRequest, uri: ParsedURI, client: HTTPClient, session: SessionHolder) {
        self.request = request
        self.uri = uri
        connectTimeout = client.connectTimeout
        readTimeout = client.readTimeout
        maxResponseBytes = client.maxResponseBytes
        policy = client.policy
        sessionHolder = session
        cancellable = OwnedGObject(adopting: UnsafeMutableRawPointer(g_cancellable_new()))
    }

    nonisolated func outcome() async -> Result<HTTPResponse, HTTPError> {
        do { return .success(try await result.value()) } catch { return .failure(error) }
    }

    func start() {
        guard !finished else { return }
        if let decidedFailure { return finish(.failure(decidedFailure)) }
        let session = sessionHolder.object
        self.session = session
        guard let created = soup_message_new_from_uri(request.method, uri.pointer) else {
            return finish(.failure(.invalidRequest(url: request.url, reason: "libsoup refused the method or URL")))
        }
        let message = OwnedGObject(adopting: UnsafeMutableRawPointer(created))
        self.message = message
        appendHeaders(request.headers, to: soup_message_get_request_headers(created))
        if !request.body.isEmpty {
            let bytes = makeGBytes(request.body)
            soup_message_set_request_body_from_bytes(created, nil, bytes)
            g_bytes_unref(bytes)
        }
        observer = MessageObserver(message: message, policy: policy, trackProgress: true,
                                   onPhase: { [unowned self] phase in self.phaseChanged(phase) },
                                   onPinMismatch: { [unowned self] fingerprint in
            self.fail(.certificateNotPinned(url: self.request.url, fingerprint: fingerprint?.hex ?? "none presented"))
        })
        soup_session_send_async(session.typed(SoupSession.self), created, G_PRIORITY_DEFAULT, cancellableHandle,
                                { _, asyncResult, data in
            onMainLoop(releaseAsyncContext(data, as: HTTPExchange.self), asyncResult) { $0.sent($1) }
        }, retainAsyncContext(self))
    }

    /// Records `failure` (the first one wins) and cancels whatever GIO operation is pending.
    func fail(_ failure: HTTPError) {
        guard !finished else { return }
        if decidedFailure == nil { decidedFailure = failure }
        if message == nil { return } // not started yet: `start` reports it
        g_cancellable_cancel(cancellableHandle)
    }

    private var cancellableHandle: UnsafeMutablePointer<GCancellable> { cancellable.typed(GCancellable.self) }

    private func phaseChanged(_ phase: MessagePhase) {
        guard !finished else { return }
        switch phase {
        case .connecting:
            guard connectTimer == nil else { return }
            connecting = true
            ioTimer?.cancel()
            ioTimer = nil
            connectTimer = MainLoopActor.schedule(after: connectTimeout) { [self] in
                fail(.connectTimeout(url: request.url, after: connectTimeout))
            }
        case .starting:
            connecting = false
            connectTimer?.cancel()
            connectTimer = nil
            armReadTimer()
        case .progress:
            armReadTimer()
        }
    }

    private func armReadTimer() {
        ioTimer?.cancel()
        ioTimer = MainLoopActor.schedule(after: readTimeout) { [self] in
            fail(.readTimeout(url: request.url, after: readTimeout))
        }
    }

    private func sent(_ asyncResult: OpaquePointer?) {
        var error: UnsafeMutablePointer<GError>?
        let input = soup_session_send_finish(session?.typed(SoupSession.self), asyncResult, &error)
        guard let input else { return finish(.failure(failure(from: error))) }
        stream = OwnedGObject(adopting: UnsafeMutableRawPointer(input))
        if let message {
            status = Int(soup_message_get_status(message.opaque).rawValue)
            reason = soup_message_get_reason_phrase(message.opaque).map { String(cString: $0) } ?? ""
            responseHeaders = readHeaders(soup_message_get_response_headers(message.opaque))
        }
        if let decidedFailure { return finish(.failure(decidedFailure)) }
        armReadTimer()
        readNextChunk()
    }

    private func readNextChunk() {
        guard let stream else { return }
        g_input_stream_read_bytes_async(stream.typed(GInputStream.self), 64 * 1024,
                                        G_PRIORITY_DEFAULT, cancellableHandle, { _, asyncResult, data in
            onMainLoop(releaseAsyncContext(data, as: HTTPExchange.self), asyncResult) { $0.chunkRead($1) }
        }, retainAsyncContext(self))
    }

    private func chunkRead(_ asyncResult: OpaquePointer?) {
        guard let stream else { return }
        var error: UnsafeMutablePointer<GError>?
        guard let bytes = g_input_stream_read_bytes_finish(stream.typed(GInputStream.self),
                                                            asyncResult, &error) else {
            return finish(.failure(failure(from: error)))
        }
        let chunk = copyBytes(bytes)
        g_bytes_unref(bytes)
        if let decidedFailure { return finish(.failure(decidedFailure)) }
        if chunk.isEmpty {
            return finish(.success(HTTPResponse(url: request.url, status: status, reason: reason,
                                                headers: responseHeaders, body: body)))
        }
        guard body.count + chunk.count <= maxResponseBytes else {
            return finish(.failure(.responseTooLarge(url: request.url, limit: maxResponseBytes)))
        }
        body += chunk
        armReadTimer()
        readNextChunk()
    }

    private func failure(from error: UnsafeMutablePointer<GError>?) -> HTTPError {
        let glibError = error.map { GLibError(taking: $0) }
        if let decidedFailure { return decidedFailure }
        guard let glibError else { return .network(url: request.url, message: "libsoup reported no error") }
        if glibError.domain == g_tls_error_quark(), let problem = observer?.certificateProblem {
            return .tlsFailure(url: request.url, message: "\(problem) (\(glibError.message))")
        }
        return HTTPError.from(glibError, url: request.url, connecting: connecting,
                              connectTimeout: connectTimeout, readTimeout: readTimeout)
    }

    /// Reports the outcome once and releases everything this exchange holds.
    private func finish(_ outcome: Result<HTTPResponse, HTTPError>) {
        guard !finished else { return }
        finished = true
        connectTimer?.cancel()
        ioTimer?.cancel()
        connectTimer = nil
        ioTimer = nil
        observer?.detach()
        observer = nil
        if let stream {
            // Closing an unfinished body drops the connection instead of reusing it; the GTask keeps
            // the stream alive until the close completes.
            g_input_stream_close_async(stream.typed(GInputStream.self), G_PRIORITY_DEFAULT, nil, nil, nil)
        }
        stream = nil
        message = nil
        session = nil
        result.resolve(outcome)
    }
}
