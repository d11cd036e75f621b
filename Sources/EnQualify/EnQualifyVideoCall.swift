import ECV
import ECVProtocol
import Foundation
import GLibCore
import Synchronization

/// The torch of the customer's device. Headless Linux has none: without one, an approved flash
/// request is answered `UNAVAILABLE`.
public protocol EnQualifyTorch: Sendable {
    /// Switches the torch; false when it cannot.
    func setTorch(on: Bool) async -> Bool
}

/// An identity-verification video call (EnQualify's VideoCall module) on the ECV call: the back
/// office's token, session and settings, then a call to a verification agent who may ask for the
/// torch, ask to repeat the OCR or face step, and posts a verdict.
///
/// Everything the call has to say goes to the `EnQualifyVideoCallDelegate`, one call at a time,
/// in order (see the protocol). Methods that cannot act now throw `EnQualifyError` at once.
public final class EnQualifyVideoCall: Sendable {
    /// The `moduleName` of `initializeCompleted`.
    public static let moduleName = "EnQualifyVideoCall"

    enum Phase: Equatable {
        case idle
        case initializing
        /// Token, session and settings are there: a call may start.
        case ready
        /// `startVideoCall` ran; `live` once the media connected with the agent.
        case calling(live: Bool)
        /// The session's call is over (a session carries one call).
        case callEnded
    }

    struct PendingTorch {
        let event: AgentRequestEvent
        let reply: OneShot<Bool, Never>
    }

    struct State {
        var phase = Phase.idle
        var generation = 0
        /// Weak, as UIKit delegates are: the app's screen usually owns the call.
        weak var delegate: (any EnQualifyVideoCallDelegate)?
        var sessionModel: SessionModelVideoCall?
        var backOffice: BackOfficeClient?
        var pins: CertificateLists?
        var token: String?
        var sessionId: String?
        var settings: VerificationSettings?
        var callSdk: ECVSdk?
        var call: VideoCall?
        var connection: WebRtcConnection?
        var hearingImpaired = false
        var visuallyImpaired = false
        var sessionUpdate: Task<Void, Never>?
        var lastAgentRequest = AgentRequestEvent.none
        var pendingTorch: PendingTorch?
        var retriesUsed: [VerificationRetryKind: Int] = [:]
        var result: EnQualifyCallResult?
        var lastError: String?
    }
    /// The facade's one state, behind one lock.
    let state = Mutex(State())
    /// The delegate's one serial context: calls delivered one at a time, in order. The delegate is
    /// looked up when a call is delivered, so calls queued before `deinitialize` still reach it.
    let delegates = SerialDelivery()

    /// The device's torch for the agent's approved flash requests; nil answers them `UNAVAILABLE`.
    public var torch: (any EnQualifyTorch)? {
        get { torchHolder.withLock { $0 } }
        set { torchHolder.withLock { $0 = newValue } }
    }
    private let torchHolder = Mutex<(any EnQualifyTorch)?>(nil)

    public init() {}

    /// The latest failure of any step, as the delegate's failure methods cannot all say it.
    public var lastError: String? { state.withLock { $0.lastError } }
    /// The back office's session id, once `Session/Add` succeeded.
    public var sessionId: String? { state.withLock { $0.sessionId } }
    /// The ECV call under way (its events, stats, recording), once `startVideoCall` dialed.
    public var videoCall: VideoCall? { state.withLock { $0.call } }
    /// The verdict, once `callResultCompleted` was delivered.
    public var callResult: EnQualifyCallResult? { state.withLock { $0.result } }

    /// Queues a delegate call (the serial context); `failure` is also kept as `lastError`.
    func tell(failure: String? = nil, _ deliver: @escaping @Sendable (any EnQualifyVideoCallDelegate) -> Void) {
        let delegate = state.withLock { state in
            if let failure { state.lastError = failure }
            return state.delegate
        }
        guard let delegate else { return }
        delegates.enqueue { deliver(delegate) }
    }

    /// Returns once every delegate call queued so far was delivered.
    public func delegateCallsDelivered() async { await delegates.drained() }

    // MARK: Initialization

    /// The document's `initialize(_:sessionModel:baseModel:)`.
    public func initialize(_ delegate: (any EnQualifyVideoCallDelegate)?, sessionModel: SessionModelVideoCall? = nil,
                           baseModel: BaseModelVideoCall? = nil) {
        initialize(delegate: delegate, sessionModel: sessionModel, baseModel: baseModel)
    }

    /// The delegate is held weakly (the app keeps it, as a view controller is kept).
    ///
    /// Creates the back office's token, adds the session and reads the settings, in this order:
    /// `tokenCreateCompleted`, then `initializeCompleted(moduleName: "EnQualifyVideoCall")`. Each
    /// failure calls its own delegate method (`tokenCreateFailed`, `sessionAddFailed`,
    /// `settingGetFailed`) and stops there; a missing model or an unusable certificate is
    /// `initializeFailed(with:)` before anything is sent.
    public func initialize(delegate: (any EnQualifyVideoCallDelegate)?, sessionModel: SessionModelVideoCall? = nil,
                           baseModel: BaseModelVideoCall? = nil) {
        let generation: Int? = state.withLock { state in
            guard state.phase == .idle else { return nil }
            state.delegate = delegate
            state.phase = .initializing
            state.generation += 1
            return state.generation
        }
        guard let generation else {
            if let delegate { delegates.enqueue { delegate.initializeFailed(with: "already initialized: deinitialize first") } }
            return
        }
        func refuse(_ key: String) {
            state.withLock { $0.phase = .idle }
            tell(failure: "initializeFailed: \(key)") { $0.initializeFailed(with: key) }
        }
        guard let sessionModel else { return refuse("sessionModel") }
        guard !sessionModel.callType.trimmingCharacters(in: .whitespaces).isEmpty else { return refuse("sessionModel.callType") }
        guard !sessionModel.reference.trimmingCharacters(in: .whitespaces).isEmpty else { return refuse("sessionModel.reference") }
        guard let baseModel else { return refuse("baseModel") }
        let base = baseModel.baseURL.trimmingCharacters(in: .whitespaces)
        guard base.hasPrefix("https://") || base.hasPrefix("http://"), URL(string: base)?.host != nil else {
            return refuse("baseModel.baseURL")
        }
        let pins: CertificateLists
        do { pins = try CertificateLists(baseModel) } catch { return refuse(error.key) }
        let sdk: ECVSdk
        do { sdk = try ECVSdk(config: Self.configuration(serviceUrl: base, signalingUrl: nil, pins: pins, iceServers: baseModel.iceServers)) } catch {
            return refuse("baseModel: \(error)")
        }
        let backOffice = BackOfficeClient(sdk: sdk, baseURL: base)
        state.withLock { state in
            state.sessionModel = sessionModel
            state.backOffice = backOffice
            state.pins = pins
            state.hearingImpaired = sessionModel.handicapped ?? false
        }
        Task { await self.runInitialization(generation: generation, backOffice: backOffice, session: sessionModel, base: baseModel, pins: pins) }
    }

    static func configuration(serviceUrl: String, signalingUrl: String?, pins: CertificateLists, iceServers: [String]?) -> ECVSdkConfiguration {
        var configuration = ECVSdkConfiguration(name: moduleName, serviceUrl: serviceUrl, signalingUrl: signalingUrl,
                                                pinnedCertificates: pins.mapi)
        configuration.signalingPinnedCertificates = pins.signalling
        configuration.iceServers = (iceServers ?? []).map { ICEServer(urls: [$0]) }
        return configuration
    }

    private func runInitialization(generation: Int, backOffice: BackOfficeClient, session: SessionModelVideoCall,
                                   base: BaseModelVideoCall, pins: CertificateLists) async {
        func current() -> Bool { state.withLock { $0.generation == generation && $0.phase == .initializing } }
        func stop(_ message: String, _ deliver: @escaping @Sendable (any EnQualifyVideoCallDelegate) -> Void) {
            state.withLock { if $0.generation == generation { $0.phase = .idle } }
            tell(failure: message, deliver)
        }
        let token: String
        do {
            var headers: [String: String] = [:]
            if let key = base.apiKey { headers[VerificationAPI.apiKeyHeader] = key }
            token = try await backOffice.send("POST", VerificationAPI.tokenCreate, headers: headers,
                                              body: TokenCreateRequest(mobileUser: base.mobileUser, locale: base.locale, countryCode: base.countryCode),
                                              as: TokenCreateResponse.self).token
        } catch {
            return stop("token create failed: \(error)") { $0.tokenCreateFailed() }
        }
        guard current() else { return }
        state.withLock { $0.token = token }
        tell { $0.tokenCreateCompleted() }

        let sessionId: String
        do {
            sessionId = try await backOffice.send("POST", VerificationAPI.sessionAdd, token: token, body: session,
                                                  as: SessionAddResponse.self).sessionId
        } catch {
            return stop("session add failed: \(error)") { $0.sessionAddFailed() }
        }
        guard current() else { return }
        state.withLock { $0.sessionId = sessionId }

        let settings: VerificationSettings
        do {
            settings = try await backOffice.get(VerificationAPI.settingsGet, query: BackOfficeClient.query(sessionId: sessionId), token: token,
                                                as: VerificationSettings.self)
            if let problem = settings.problem { throw BackOfficeFailure(message: "the back office's settings are unusable: \(problem)") }
        } catch {
            return stop("settings get failed: \(error)") { $0.settingGetFailed() }
        }
        let callSdk: ECVSdk
        do {
            callSdk = try ECVSdk(config: Self.configuration(serviceUrl: settings.serviceUrl ?? backOffice.baseURL,
                                                            signalingUrl: settings.signalingUrl, pins: pins, iceServers: base.iceServers))
        } catch {
            return stop("settings get failed: the settings' service URL cannot be used: \(error)") { $0.settingGetFailed() }
        }
        let ready = state.withLock { state -> Bool in
            guard state.generation == generation, state.phase == .initializing else { return false }
            state.settings = settings
            state.callSdk = callSdk
            state.phase = .ready
            return true
        }
        guard ready else { return }
        tell { $0.initializeCompleted(moduleName: Self.moduleName) }
    }

    // MARK: Session

    /// Marks the customer as hearing and/or visually impaired: the session is updated, and the
    /// call is routed before other customers' who waited longer; set while the call waits, it
    /// moves the call up at once. A failure (no session yet, the back office refused) is
    /// `sessionUpdateFailed`.
    public func setHandicappedStatus(hearing: Bool, visually: Bool) {
        // One critical section: updates run one after the other, in the order they were asked for.
        let queued = state.withLock { state -> Bool in
            guard let office = state.backOffice, let token = state.token, let id = state.sessionId,
                  state.phase != .callEnded else { return false }
            let previous = state.sessionUpdate
            let generation = state.generation
            state.sessionUpdate = Task {
                await previous?.value
                do {
                    _ = try await office.send("POST", VerificationAPI.sessionUpdate, token: token,
                                              body: SessionUpdateRequest(sessionId: id, hearingImpaired: hearing, visuallyImpaired: visually),
                                              as: VerificationStatusResponse.self)
                    self.state.withLock { state in
                        guard state.generation == generation else { return }
                        state.hearingImpaired = hearing
                        state.visuallyImpaired = visually
                    }
                } catch {
                    self.tell(failure: "session update failed: \(error)") { $0.sessionUpdateFailed() }
                }
            }
            return true
        }
        if !queued {
            tell(failure: "session update failed: there is no session (before initializeCompleted) or its call is over") { $0.sessionUpdateFailed() }
        }
    }

    /// Closes the back-office session: `sessionCloseCompleted(status:)` or `sessionCloseFailed`.
    public func closeSession() {
        let request: (BackOfficeClient, String, String)? = state.withLock { state in
            guard let office = state.backOffice, let token = state.token, let id = state.sessionId else { return nil }
            return (office, token, id)
        }
        guard let (office, token, id) = request else {
            tell(failure: "session close failed: there is no session") { $0.sessionCloseFailed() }
            return
        }
        Task {
            do {
                let answer = try await office.send("POST", VerificationAPI.sessionClose, token: token, body: SessionReference(sessionId: id),
                                                   as: VerificationStatusResponse.self)
                self.tell { $0.sessionCloseCompleted(status: answer.status) }
            } catch {
                self.tell(failure: "session close failed: \(error)") { $0.sessionCloseFailed() }
            }
        }
    }

    /// Ends any call, answers a waiting torch request `REFUSED`, and forgets the session and the
    /// delegate; the delegate hears nothing after the calls already queued. `initialize` may run
    /// again afterwards. `deinitializeCore` is the document's switch for its Core module: here the
    /// SDK's connections to the back office and the ECV service go in either case.
    public func deinitialize(deinitializeCore: Bool) {
        let (call, torch) = state.withLock { state -> (VideoCall?, PendingTorch?) in
            let taken = (state.call, state.pendingTorch)
            let generation = state.generation
            state = State()
            state.generation = generation + 1
            return taken
        }
        torch?.reply.resolve(.success(false))
        call?.hangup()
    }
}
