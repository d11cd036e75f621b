import ECV
import ECVProtocol
import Foundation
import GLibCore

extension EnQualifyVideoCall {
    /// Starts the verification call (headless: renderers instead of a view controller): dials the
    /// back office's queue, links the call to the session with the call's caller token
    /// (`integrationAddCompleted`), connects the media once an agent answers (`callStarted`).
    /// Later failures are `integrationAddFailed`, `sessionRoomFailed` (room or signalling) or
    /// `videoCallFailed(error:)`.
    ///
    /// - Throws: `.notInitialized` before `initializeCompleted`; `.callAlreadyStarted` when this
    ///   session's call is under way or over.
    public func startVideoCall(remoteVideoRenderer: (any VideoRenderer)? = nil, localVideoRenderer: (any VideoRenderer)? = nil,
                               videoSource: VideoInputs? = nil) throws(EnQualifyError) {
        let prepared: Result<(ECVSdk, BackOfficeClient, String, String, VerificationSettings, SessionModelVideoCall, Task<Void, Never>?, Int),
                             EnQualifyError> = state.withLock { state in
            switch state.phase {
            case .idle, .initializing: return .failure(.notInitialized)
            case .calling, .callEnded: return .failure(.callAlreadyStarted)
            case .ready: break
            }
            guard let sdk = state.callSdk, let office = state.backOffice, let token = state.token, let id = state.sessionId,
                  let settings = state.settings, let model = state.sessionModel else { return .failure(.notInitialized) }
            state.phase = .calling(live: false)
            state.retriesUsed = [:]
            state.lastAgentRequest = .none
            return .success((sdk, office, token, id, settings, model, state.sessionUpdate, state.generation))
        }
        let (sdk, office, token, sessionId, settings, model, update, generation) = try prepared.get()
        Task {
            await update?.value
            await self.runCall(sdk: sdk, office: office, token: token, sessionId: sessionId, settings: settings, model: model,
                               generation: generation, renderers: (remoteVideoRenderer, localVideoRenderer), videoSource: videoSource)
        }
    }

    private func runCall(sdk: ECVSdk, office: BackOfficeClient, token: String, sessionId: String, settings: VerificationSettings,
                         model: SessionModelVideoCall, generation: Int, renderers: ((any VideoRenderer)?, (any VideoRenderer)?),
                         videoSource: VideoInputs?) async {
        func abandon(_ message: String, _ deliver: @escaping @Sendable (any EnQualifyVideoCallDelegate) -> Void) {
            state.withLock { if $0.generation == generation { $0.phase = .callEnded } }
            tell(failure: message, deliver)
        }
        guard let call = await sdk.createVideoCall(), !call.rtcId.isEmpty, !call.isEnded else {
            return abandon("the call could not be created") { $0.videoCallFailed(error: "the ECV service gave no call id") }
        }
        let events = call.events()
        let kept = state.withLock { state -> Bool in
            guard state.generation == generation else { return false }
            state.call = call
            return true
        }
        guard kept else { call.hangup(); return }
        let (hearing, visually) = state.withLock { ($0.hearingImpaired, $0.visuallyImpaired) }
        var attributes = ["reference": model.reference, "callType": model.callType]
        if let identityType = model.identityType { attributes["identityType"] = identityType }
        let dial = DialCallParameters(callerName: model.displayName, attributes: attributes, queue: settings.queue,
                                      acdAttributes: [VerificationAPI.sessionAttribute: sessionId,
                                                      ACDAttributeKey.hearingImpaired: hearing ? "true" : "false",
                                                      ACDAttributeKey.visuallyImpaired: visually ? "true" : "false"])
        await call.start(dialCallParameters: dial)
        // The link proves the call is this customer's with the caller token DialEx issued
        // (docs/protocol.md §7.6), so it follows the dial; the call's events wait in their stream
        // meanwhile and are delivered after integrationAddCompleted, in order. A dial that failed
        // is reported by the watcher (videoCallFailed), as a call that ends before it connects.
        if call.isDialed {
            var proof: [String: String] = [:]
            if let callerToken = call.callerToken { proof[ECVAPI.callTokenHeader] = callerToken }
            do {
                _ = try await office.send("POST", VerificationAPI.integrationAdd, token: token, headers: proof,
                                          body: IntegrationAddRequest(sessionId: sessionId, rtcId: call.rtcId), as: VerificationStatusResponse.self)
            } catch {
                call.hangup()
                return abandon("integration add failed: \(error)") { $0.integrationAddFailed(errorMessage: error.description) }
            }
            tell { $0.integrationAddCompleted() }
        }
        let watcher = Task { await self.watch(events, call: call, generation: generation) }
        guard await call.agentConnected?.value == true else { return await watcher.value }
        // Deinitialized (or ended) while waiting for the agent: no media is set up for a call that is going.
        guard state.withLock({ $0.generation == generation }), !call.isEnded else { return await watcher.value }
        let parameters = ConnectParameters(videoWidth: settings.videoWidth, videoHeight: settings.videoHeight,
                                           videoCodec: settings.videoCodec.uppercased(), noAudioProcessing: true)
        guard let connection = call.connect(parameters: parameters) else { return await watcher.value }
        connection.remoteVideoRenderer = renderers.0
        connection.localVideoRenderer = renderers.1
        if let videoSource { connection.videoSource = videoSource }
        connection.flashlightHandler = TorchBridge(owner: self, approvalTimeout: .milliseconds(settings.flashApprovalTimeoutMs))
        state.withLock { if $0.generation == generation { $0.connection = connection } }
        await connection.startRoom()
        await watcher.value
    }

    /// The call's events, in order: connection, agent texts, errors, the end.
    private func watch(_ events: AsyncStream<VideoCallEvent>, call: VideoCall, generation: Int) async {
        var started = false
        var roomFailure = false
        var failure: String?
        for await event in events {
            switch event.type {
            case .WebRtcConnected where !started:
                started = true
                state.withLock { if $0.generation == generation { $0.phase = .calling(live: true) } }
                tell { $0.callStarted() }
            case .TextChannelMessage:
                if let command = VerificationCommand(parsing: event.detail ?? "") { await received(command) }
            case .Error:
                let name = event.data["name"] ?? ""
                if name == ErrorName.JOIN_ROOM_FAILED.rawValue || name == ErrorName.SIGNALING_FAILED.rawValue { roomFailure = true }
                failure = failure ?? "\(name): \(event.detail ?? "")"
            case .CallEnded:
                let (pending, autoClose) = state.withLock { state -> (PendingTorch?, Bool) in
                    let current = state.generation == generation
                    if current { state.phase = .callEnded; state.connection = nil }
                    defer { state.pendingTorch = nil }
                    return (state.pendingTorch, current && state.sessionModel?.canAutoClose == true)
                }
                pending?.reply.resolve(.success(false))
                // canAutoClose: the session's one call is over and everything about it was said
                // (the verdict asked for), so the session closes itself: sessionCloseCompleted follows.
                defer { if autoClose { closeSession() } }
                guard started else {
                    // The customer gave up waiting (endVideoCall): an end, not a failure.
                    if event.detail == CallEndReason.localHangup.rawValue, failure == nil {
                        tell { $0.hangupConfirmation() }
                        return
                    }
                    let message = failure ?? "the call ended before it connected (\(event.detail ?? "no reason"))"
                    if roomFailure { tell(failure: message) { $0.sessionRoomFailed() } } else { tell(failure: message) { $0.videoCallFailed(error: message) } }
                    return
                }
                // A call that broke off (not hung up by either side) is also a failure of the call.
                let reason = event.detail ?? ""
                if reason != CallEndReason.localHangup.rawValue, reason != CallEndReason.remoteHangup.rawValue {
                    let message = "the call ended: \(reason)"
                    tell(failure: message) { $0.videoCallFailed(error: message) }
                }
                tell { $0.hangupConfirmation() }
                await fetchResult(afterEnd: true)
            default:
                break
            }
        }
    }

    /// A verification command from the agent.
    private func received(_ command: VerificationCommand) async {
        switch command {
        case .retryRequest(let step):
            let event: AgentRequestEvent = switch step {
            case .ocr: .ocrRetry
            case .face: .faceRetry
            case .nfc: .nfcRetry
            }
            announce(event)
        case .callResultReady:
            announce(.callResult)
            await fetchResult(afterEnd: false)
        case .retryOutcome:
            break // the customer's own kind of message, echoed or misdirected: nothing to do
        }
    }

    /// `agentRequest(event:lastEvent:)`, remembering the request as the next one's `lastEvent`.
    func announce(_ event: AgentRequestEvent) {
        let last = state.withLock { state in defer { state.lastAgentRequest = event }; return state.lastAgentRequest }
        tell { $0.agentRequest(event: event, lastEvent: last) }
    }

    /// The verdict from the back office, delivered once: `callResultCompleted`, or after the
    /// call's end without one, `callResultFailed`.
    private func fetchResult(afterEnd: Bool) async {
        let request: (BackOfficeClient, String, String)? = state.withLock { state in
            guard state.result == nil, let office = state.backOffice, let token = state.token, let id = state.sessionId else { return nil }
            return (office, token, id)
        }
        guard let (office, token, id) = request else { return }
        do {
            let answer = try await office.get(VerificationAPI.callResult, query: BackOfficeClient.query(sessionId: id), token: token,
                                              as: CallResultResponse.self)
            let result = EnQualifyCallResult(result: answer.result, description: answer.description, reference: answer.reference)
            let first = state.withLock { state -> Bool in
                guard state.result == nil else { return false }
                state.result = result
                return true
            }
            if first { tell { $0.callResultCompleted(result: result.result, description: result.description, reference: result.reference) } }
        } catch {
            if afterEnd { tell(failure: "call result failed: \(error)") { $0.callResultFailed() } }
        }
    }

    // MARK: During the call

    /// The live call's connection, or `.notInCall`.
    func liveConnection() throws(EnQualifyError) -> WebRtcConnection {
        let connection = state.withLock { state -> WebRtcConnection? in
            guard case .calling(live: true) = state.phase else { return nil }
            return state.connection
        }
        guard let connection else { throw .notInCall }
        return connection
    }

    /// The customer agrees to repeat the OCR step: the agent is told (`OCR_RETRY|STARTED`), the
    /// call's camera pauses for the step (`backToVideoCall()` resumes it), and `ocrRetryRequested`
    /// follows. Report the step's outcome with `retryCompleted(kind: .ocr, success:)`.
    ///
    /// - Throws: `.notInCall` outside an active video call; `.retryLimitReached` past the back
    ///   office's limit (the agent is told `LIMIT_REACHED`).
    public func ocrRetry() throws(EnQualifyError) {
        try beginRetry(.ocr)
        tell { $0.ocrRetryRequested() }
    }

    /// As `ocrRetry()`, for the face step: `faceRetryRequested` follows.
    public func faceRetry() throws(EnQualifyError) {
        try beginRetry(.face)
        tell { $0.faceRetryRequested() }
    }

    private func beginRetry(_ kind: VerificationRetryKind) throws(EnQualifyError) {
        let connection = try liveConnection()
        let step = Self.step(kind)
        let limit = state.withLock { state -> Int? in
            let limit = kind == .face ? state.settings?.maxFaceRetries ?? 0 : state.settings?.maxOcrRetries ?? 0
            let used = state.retriesUsed[kind, default: 0]
            guard used < limit else { return limit }
            state.retriesUsed[kind] = used + 1
            return nil
        }
        if let limit {
            connection.sendTextMessage(VerificationCommand.retryOutcome(step, .limitReached, detail: nil).text)
            throw .retryLimitReached(kind, limit: limit)
        }
        connection.sendTextMessage(VerificationCommand.retryOutcome(step, .started, detail: nil).text)
        connection.setVideoEnabled(state: false)
    }

    /// The outcome of a repeated step, for the agent (`…|SUCCEEDED` / `…|FAILED`, with `detail`).
    public func retryCompleted(kind: VerificationRetryKind, success: Bool, detail: String? = nil) throws(EnQualifyError) {
        let connection = try liveConnection()
        connection.sendTextMessage(VerificationCommand.retryOutcome(Self.step(kind), success ? .succeeded : .failed, detail: detail).text)
    }

    /// Back to the call after a retry step: the camera is sent again.
    public func backToVideoCall() throws(EnQualifyError) {
        try liveConnection().setVideoEnabled(state: true)
    }

    /// Hangs up the call, if there is one (`hangupConfirmation` follows its end).
    public func endVideoCall() {
        state.withLock { $0.call }?.hangup()
    }

    static func step(_ kind: VerificationRetryKind) -> VerificationCommand.VerificationStep {
        switch kind {
        case .ocr: .ocr
        case .face: .face
        case .nfc: .nfc
        }
    }
}
