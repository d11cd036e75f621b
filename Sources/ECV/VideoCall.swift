import ECVProtocol
import Foundation
import GLibCore
import GStreamer
import Soup
import Synchronization

/// One call: dial, wait in the queue, connect media, hang up. Events describe every step.
///
/// A call ends exactly once: `CallEnded` is its last event, except for a transferred leg, whose
/// last event is `TransferCompleted` (data `rtcId`: the new leg). Its media, sockets and timers are
/// released before `CallEnded` (right after `TransferCompleted`), and the SDK forgets it after.
public final class VideoCall: Sendable {
    let sdk: ECVSdk
    private let broadcaster = Broadcaster<VideoCallEvent>()
    private let agentOutcome = OneShot<Bool, Never>()

    /// How far the call's dial went.
    enum Dial: Sendable { case notDialed, dialing, dialed }

    /// Where the call is in its life; only forward. `ended`: the call is over, its teardown runs
    /// and only `CallEnded` may still be raised; `finished`: its last event was raised.
    enum Life: Sendable, Comparable { case live, hangingUp, ended, finished }

    struct State {
        var rtcId: String
        var dial = Dial.notDialed
        var life = Life.live
        var lastError = ErrorObject()
        var lastEvent = VideoCallEvent.none
        var queueInfo: QueueInfo?
        var isAgentConnected = false
        var transferPending = false
        var dialResponse: [String: any Sendable]?
        var callerToken: String?
        var useQueueSocketOverride: Bool?
        var useQueueInfoOverride: Bool?
        var waiter: (any QueueWaiter)?
        var waitMode: QueueWaitMode?
        var connection: WebRtcConnection?
    }
    let state: Mutex<State>

    /// Resolves `true` when an agent connects, `false` if the call ends first.
    public let agentConnected: Task<Bool, Never>?

    init(sdk: ECVSdk, rtcId: String, callerToken: String? = nil) {
        self.sdk = sdk
        var initial = State(rtcId: rtcId)
        initial.callerToken = callerToken
        state = Mutex(initial)
        let outcome = agentOutcome
        agentConnected = Task { await outcome.value() }
        InstanceCounter.increment("VideoCall")
    }

    deinit { InstanceCounter.decrement("VideoCall") }

    // MARK: Properties

    public var rtcId: String { state.withLock { $0.rtcId } }
    public var lastError: ErrorObject { state.withLock { $0.lastError } }
    public var queueInfo: QueueInfo? { state.withLock { $0.queueInfo } }
    /// The raw DialEx answer, once `DialSuccess` happened.
    public var dialResponse: [String: any Sendable]? { state.withLock { $0.dialResponse } }
    public var isAgentConnected: Bool { state.withLock { $0.isAgentConnected } }
    public var webRtcConnection: WebRtcConnection? { state.withLock { $0.connection } }
    public var isEnded: Bool { state.withLock { $0.life >= .ended } }
    /// How this call waits for its agent, once the wait began (configuration and overrides decide).
    public var queueWaitMode: QueueWaitMode? { state.withLock { $0.waitMode } }

    /// The call's credential from DialEx (docs/protocol.md §1.9), presented on Hangup, polling, the
    /// queue socket and the room; nil when the backend issues none. A transferred leg created
    /// with `createVideoCall(rtcId:)` on the same SDK inherits it; set it when you carry a leg
    /// elsewhere. Treat it as a secret: whoever holds it can end the call.
    public var callerToken: String? {
        get { state.withLock { $0.callerToken } }
        set { state.withLock { $0.callerToken = newValue } }
    }

    /// Set it to true for a transferred leg, which must never be dialed again, then call
    /// `createQueueSocket()`.
    public var isDialed: Bool {
        get { state.withLock { $0.dial == .dialed } }
        set { state.withLock { state in if newValue { state.dial = .dialed } else if state.dial == .dialed { state.dial = .notDialed } } }
    }

    /// Per-call queue mode overrides (nil: the configuration's). Read when the wait begins.
    public var useQueueSocketOverride: Bool? {
        get { state.withLock { $0.useQueueSocketOverride } }
        set { state.withLock { $0.useQueueSocketOverride = newValue } }
    }
    public var useQueueInfoOverride: Bool? {
        get { state.withLock { $0.useQueueInfoOverride } }
        set { state.withLock { $0.useQueueInfoOverride = newValue } }
    }

    /// This call's events from now on, as an async sequence.
    public func events() -> AsyncStream<VideoCallEvent> { broadcaster.subscribe() }

    /// The browser page that joins this call in the caller's place (a development convenience).
    /// With a caller token the link carries it as `?token=`, and the page presents it on its
    /// room requests: the link is then as secret as the token.
    public func getUrl() -> String? {
        let (rtcId, token) = state.withLock { ($0.rtcId, $0.callerToken) }
        guard !rtcId.isEmpty else { return nil }
        let page = ECVAPI.url(base: sdk.config.webrtcUrl, path: ECVAPI.browserRoomPath(room: rtcId))
        guard let token, !token.isEmpty else { return page }
        return page + "?" + ECVAPI.tokenQueryName + "=" + (token.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? token)
    }

    // MARK: Events

    func emit(_ type: VideoCallEventType, detail: String? = nil, objData: (any Sendable)? = nil, data: [String: String] = [:]) {
        let event = VideoCallEvent(type: type, detail: detail, objData: objData, data: data)
        let delivered = state.withLock { state -> Bool in
            guard state.life < .ended || state.life == .ended && type == .CallEnded else { return false }
            if type == .CallEnded { state.life = .finished }
            let last = state.lastEvent
            state.lastEvent = event
            sdk.modules.deliver(self, event, last: last)
            broadcaster.yield(event)
            return true
        }
        guard delivered else { return }
        Logger.debug("[\(rtcId)] \(event)")
        if type == .CallEnded { broadcaster.finish() }
    }

    /// Ends the event stream without `CallEnded` (a transferred leg: `TransferCompleted` was last).
    private func finishSilently() {
        let finishing = state.withLock { state in defer { state.life = .finished }; return state.life != .finished }
        if finishing { broadcaster.finish() }
    }

    /// Records `lastError`, emits `Error` and, when `endingCall`, ends the call with the error's name.
    @discardableResult
    func fail(_ name: ErrorName, _ message: String, cause: CallFailure? = nil, endingCall: Bool) -> ErrorObject {
        let error = ErrorObject(name: name, message: message, cause: cause)
        state.withLock { $0.lastError = error }
        Logger.error("[\(rtcId)] \(name.rawValue): \(message)")
        emit(.Error, detail: message, objData: error, data: ["name": name.rawValue])
        if endingCall { end(CallEndReason(rawValue: name.rawValue)) }
        return error
    }

    /// `fail` (not ending the call) for an API that also throws: the error it throws.
    func reportedFailure(_ name: ErrorName, _ message: String, cause: CallFailure? = nil,
                         underlying: (any Error & Sendable)? = nil) -> ECVError {
        ECVError(fail(name, message, cause: cause, endingCall: false), underlying: underlying)
    }

    func assign(rtcId: String) { state.withLock { $0.rtcId = rtcId } }

    // MARK: Dial

    /// Dials the call (DialEx): `DialSuccess`, `OnQueue`, then waits for an agent in the queue
    /// mode the configuration and the per-call overrides select.
    public func start(dialCallParameters: DialCallParameters = DialCallParameters()) async {
        let refusal: (ErrorName, String)? = state.withLock { state in
            if state.life >= .ended { return (.CALL_ENDED, "the call has ended") }
            if state.rtcId.isEmpty { return (.CALL_NOT_INITIALIZED, "the call has no rtcId; it cannot be dialed") }
            if state.dial != .notDialed { return (.CALL_ALREADY_DIALED, "call \(state.rtcId) was already dialed") }
            state.dial = .dialing
            return nil
        }
        if let (name, message) = refusal { fail(name, message, endingCall: false); return }
        let request = DialExRequest(rtcId: rtcId, callerName: dialCallParameters.callerName, attributes: dialCallParameters.attributes,
                                    queue: dialCallParameters.queue, acdAttributes: dialCallParameters.acdAttributes,
                                    customPayload: dialCallParameters.customPayload)
        do {
            let (response, raw) = try await sdk.service.dial(request, headers: dialCallParameters.additionalHeaders)
            let abandoned = state.withLock { state in
                state.dial = .dialed
                state.dialResponse = raw
                state.callerToken = response.callerToken
                return state.life != .live
            }
            if abandoned {
                // A hangup that raced the dial went out without the token the answer just brought.
                if response.callerToken != nil {
                    do {
                        try await sdk.service.hangup(rtcId: response.rtcId, reason: CallEndReason.localHangup.rawValue, callerToken: response.callerToken)
                    } catch {
                        fail(.HANGUP_FAILED, "the service refused the hangup of \(response.rtcId): \(error)", endingCall: false)
                    }
                }
                return
            }
            emit(.DialSuccess, detail: response.interactionId, objData: raw)
            emit(.OnQueue, detail: response.queue)
            await beginWaiting()
        } catch {
            state.withLock { $0.dial = .notDialed }
            let name: ErrorName = error.serviceCode == ServiceErrorCode.alreadyDialed.rawValue ? .CALL_ALREADY_DIALED : .ERROR_DIALING
            fail(name, "DialEx for \(rtcId) failed: \(error)", endingCall: true)
        }
    }

    /// Waits on the queue socket only, for a transferred leg (`isDialed = true` first): no DialEx.
    /// Returns false when the socket cannot be opened (after `Error` `QUEUE_SOCKET_CLOSED`).
    @discardableResult
    public func createQueueSocket() async -> Bool {
        let refusal: (ErrorName, String)? = state.withLock { state in
            if state.life >= .ended { return (.CALL_ENDED, "the call has ended") }
            if state.rtcId.isEmpty { return (.CALL_NOT_INITIALIZED, "the call has no rtcId") }
            if state.dial != .dialed { return (.CALL_NOT_DIALED, "set isDialed (a transferred leg) or start() the call first") }
            return nil
        }
        if let (name, message) = refusal { fail(name, message, endingCall: false); return false }
        return await openQueueSocket()
    }

    private func beginWaiting() async {
        let (socket, info) = state.withLock { state in
            (state.useQueueSocketOverride ?? sdk.config.useQueueSocket, state.useQueueInfoOverride ?? sdk.config.useQueueInfo)
        }
        if socket {
            await openQueueSocket()
            return
        }
        state.withLock { $0.waitMode = info ? .queueInfoPolling : .legacyPolling }
        let config = sdk.config
        let waiter = PollingWaiter(
            service: sdk.service, prefix: info ? config.queueInfoPollingPrefix : config.legacyPollingPrefix, rtcId: rtcId,
            callerToken: callerToken, interval: .milliseconds(max(50, info ? config.queueInfoIntervalDelay : config.waitForRoomIntervalDelay)),
            failureLimit: config.pollingFailureLimit, notFoundLimit: config.notFoundPollLimit) { [weak self] update in
                self?.handle(update, queueInfoMode: info)
            }
        install(waiter)
    }

    @discardableResult
    private func openQueueSocket() async -> Bool {
        let config = sdk.config
        let url = ECVAPI.webSocketBase(ECVAPI.url(base: config.serviceUrl, path: ECVAPI.queueSocket)) + "?"
            + ECVAPI.rtcIdQueryName + "=" + (rtcId.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? rtcId)
        let waiter = QueueSocketWaiter()
        install(waiter)
        state.withLock { $0.waitMode = .queueSocket }
        return await waiter.start(url: url, callerToken: callerToken, options: sdk.tls.webSocketOptions(signaling: false),
                                  connectTimeout: .milliseconds(max(1, config.httpTimeoutMs)),
                                  window: .milliseconds(max(0, config.reconnectWindowMs))) { [weak self] update in
            self?.handle(update, queueInfoMode: false)
        }
    }

    private func install(_ waiter: any QueueWaiter) {
        let previous = state.withLock { state -> (any QueueWaiter)? in
            defer { state.waiter = waiter }
            return state.waiter
        }
        previous?.stop()
    }

    // MARK: Queue updates

    private func handle(_ update: QueueUpdate, queueInfoMode: Bool) {
        switch update {
        case .polled(let answer):
            handlePolled(answer, queueInfoMode: queueInfoMode)
        case .pushed(let message):
            handlePushed(message)
        case .reconnecting(let reason):
            emit(.Reconnecting, detail: ReconnectingLink.queueSocket, data: ["reason": reason])
        case .reconnected:
            emit(.Reconnected, detail: ReconnectingLink.queueSocket)
        case .socketClosed(let code, let reason):
            fail(.QUEUE_SOCKET_CLOSED, "the queue socket closed (\(code)\(reason.isEmpty ? "" : " \(reason)"))",
                 endingCall: !isAgentConnected)
        case .failed(let name, let message):
            fail(name, message, endingCall: !(name == .QUEUE_SOCKET_CLOSED && isAgentConnected))
        }
    }

    /// In queue-info mode every answer is first a `QueueInfoUpdated` (detail: the raw state), then
    /// the state's own event, if any.
    private func handlePolled(_ answer: QueueInfoResponse, queueInfoMode: Bool) {
        if queueInfoMode {
            let info = QueueInfo(answer)
            state.withLock { $0.queueInfo = info }
            emit(.QueueInfoUpdated, detail: info.state, objData: info, data: info.eventData)
        }
        switch answer.state {
        case .wait:
            break
        case .agentConnected:
            let cancelled = state.withLock { state in defer { state.transferPending = false }; return state.transferPending }
            if cancelled { emit(.TransferCancelled) }
            agentDidConnect(agentName: nil, agentId: nil)
        case .transferPending:
            let first = state.withLock { state in defer { state.transferPending = true }; return !state.transferPending }
            if first { emit(.TransferPending) }
        case .transferred:
            transferDidComplete(newRtcId: answer.newRtcId ?? "")
        case .ended:
            end(Self.endDetail(answer.reason))
        case .notFound:
            break // the waiter ends the wait after `notFoundPollLimit` of them in a row
        }
    }

    private func handlePushed(_ message: QueueSocketMessage) {
        switch message {
        case .waiting:
            break
        case .agentConnected(_, let agentId, let agentName):
            agentDidConnect(agentName: agentName, agentId: agentId)
        case .transferPending(_, let target):
            state.withLock { $0.transferPending = true }
            emit(.TransferPending, data: target.eventData)
        case .transferCancelled(_, let reason):
            state.withLock { $0.transferPending = false }
            emit(.TransferCancelled, detail: reason.rawValue)
        case .transferCompleted(_, let newRtcId):
            transferDidComplete(newRtcId: newRtcId)
        case .callEnded(_, let reason):
            end(Self.endDetail(reason))
        case .error(let code, let message):
            fail(.QUEUE_SOCKET_CLOSED, "queue socket error \(code.rawValue): \(message)", endingCall: !isAgentConnected)
        }
    }

    private func agentDidConnect(agentName: String?, agentId: String?) {
        let first = state.withLock { state in defer { state.isAgentConnected = true }; return !state.isAgentConnected }
        guard first else { return }
        var data: [String: String] = [:]
        if let agentName { data["agentName"] = agentName }
        if let agentId { data["agentId"] = agentId }
        emit(.AgentConnected, detail: agentName, data: data)
        agentOutcome.resolve(.success(true))
    }

    /// The Turkish guide §7.1: `TransferCompleted` tears the call down and the app goes back to the
    /// queue page with the new rtcId. No `CallEnded` follows it: the guide's CallScreen clears
    /// every handler and goes home on `CallEnded`, which would drop the new leg's handlers too.
    private func transferDidComplete(newRtcId: String) {
        if let token = callerToken, !newRtcId.isEmpty { sdk.inheritCallerToken(token, forTransferredLeg: newRtcId) }
        emit(.TransferCompleted, detail: newRtcId, data: ["rtcId": newRtcId])
        end(CallEndReason.transferred)
    }

    /// The caller's end for the service's: the agent's ends are the remote side's, the caller's own hangup is local.
    static func endDetail(_ reason: CallEndReason?) -> CallEndReason {
        switch reason {
        case .agentHangup?, .agentLost?, nil: .remoteHangup
        case .callerHangup?: .localHangup
        case let other?: other
        }
    }

    // MARK: Connect

    /// The call's WebRTC connection (created once): call `startRoom()` on it after `AgentConnected`.
    /// nil, after an `Error`, when the call was never dialed or has ended.
    public func connect(parameters: ConnectParameters = ConnectParameters()) -> WebRtcConnection? {
        let outcome: Result<WebRtcConnection, ErrorObject> = state.withLock { state in
            if state.life >= .ended { return .failure(ErrorObject(name: .CALL_ENDED, message: "the call has ended")) }
            if state.dial != .dialed { return .failure(ErrorObject(name: .CALL_NOT_DIALED, message: "connect() needs a dialed call")) }
            if let existing = state.connection { return .success(existing) }
            let connection = WebRtcConnection(call: self, parameters: parameters)
            state.connection = connection
            return .success(connection)
        }
        switch outcome {
        case .success(let connection): return connection
        case .failure(let error): fail(error.name, error.message, endingCall: false); return nil
        }
    }

    // MARK: End

    /// The agent left the room (`bye`). The service closes the room both when the call ends and
    /// when it is transferred, and the queue socket or the next poll says which; so the verdict
    /// waits that long before concluding a remote hangup.
    func remoteLeftRoom() {
        let mode = state.withLock { $0.waitMode }
        let grace: Duration = switch mode {
        case .queueSocket?: .milliseconds(1500)
        case .queueInfoPolling?: .milliseconds(min(5000, sdk.config.queueInfoIntervalDelay + 1000))
        case .legacyPolling?: .milliseconds(min(5000, sdk.config.waitForRoomIntervalDelay + 1000))
        case nil: .zero
        }
        Task { [weak self] in
            // Cancelled: the wait ends early and the loop or the guard after it decides.
            try? await Task.sleep(for: grace)
            self?.end(CallEndReason.remoteHangup)
        }
    }

    /// Ends the call from this side: `Hangup` now, then the service is told, media is closed and
    /// `CallEnded` (`LOCAL_HANGUP`) follows.
    public func hangup() {
        let (proceed, dialed, dialing) = state.withLock { state -> (Bool, Bool, Bool) in
            guard state.life == .live else { return (false, false, false) }
            state.life = .hangingUp
            return (true, state.dial == .dialed, state.dial == .dialing)
        }
        guard proceed else { return }
        emit(.Hangup)
        Task {
            if !dialed && !dialing {
                fail(.CALL_NOT_DIALED, "hangup before the call was dialed: nothing to hang up on the service", endingCall: false)
            }
            await webRtcConnection?.close(sendBye: true)
            if dialed || dialing {
                do { try await sdk.service.hangup(rtcId: rtcId, reason: CallEndReason.localHangup.rawValue, callerToken: callerToken) } catch {
                    fail(.HANGUP_FAILED, "the service refused the hangup of \(rtcId): \(error)", endingCall: false)
                }
            }
            end(CallEndReason.localHangup)
        }
    }

    /// Ends the call once: stops the queue wait, closes media and signaling, tells the service
    /// when the end is ours (an error, a timeout, a lost peer) and the call was dialed, then
    /// `CallEnded`. Ends the service reported (or a hangup already sent) are not echoed back.
    func end(_ reason: CallEndReason, notifyService: Bool? = nil) {
        let serviceKnows = [.remoteHangup, .transferred, .localHangup, .queueTimeout, .serviceShutdown].contains(reason)
        let notify = notifyService ?? !serviceKnows
        let taken = state.withLock { state -> (waiter: (any QueueWaiter)?, connection: WebRtcConnection?, dialed: Bool)? in
            guard state.life < .ended else { return nil }
            state.life = .ended
            defer { state.waiter = nil }
            return (state.waiter, state.connection, state.dial == .dialed)
        }
        guard let taken else { return }
        agentOutcome.resolve(.success(false))
        Task {
            taken.waiter?.stop()
            await taken.connection?.close(sendBye: reason != .remoteHangup)
            if notify && taken.dialed {
                // An end of our making often means the service is unreachable: telling it is tried
                // for one request timeout, not the whole reconnect window, so `CallEnded` is not held up.
                let window = Duration.milliseconds(max(0, min(sdk.config.httpTimeoutMs, sdk.config.reconnectWindowMs)))
                do { try await sdk.service.hangup(rtcId: rtcId, reason: reason.rawValue, callerToken: callerToken, retryWindow: window) } catch {
                    fail(.HANGUP_FAILED, "the service was not told that \(rtcId) ended (\(reason)): \(error)", endingCall: false)
                }
            }
            state.withLock { $0.connection = nil }
            if reason == .transferred { finishSilently() } else { emit(.CallEnded, detail: reason.rawValue) }
            sdk.forget(self)
        }
    }
}

/// The three ways of waiting, by precedence: queue socket > queue-info polling > legacy polling.
public enum QueueWaitMode: String, Sendable {
    case queueSocket, queueInfoPolling, legacyPolling
}

extension QueueInfo {
    var eventData: [String: String] {
        var data = ["state": state]
        if let displayPosition { data["position"] = String(displayPosition) }
        if let ewtMinutes { data["ewtMinutes"] = String(ewtMinutes) }
        return data
    }
}

extension TransferTarget {
    var eventData: [String: String] {
        switch self {
        case .queue(let name): ["target": name, "targetType": "queue"]
        case .agent(let id): ["target": id, "targetType": "agent"]
        }
    }
}
