import Foundation
import GLibCore
import GStreamer
import Synchronization

/// The SDK's entry point: create calls, find them by rtcId, and listen to their events.
///
/// Keep one instance per backend configuration. Every call's events are delivered, in order, to
/// `modules.onCallEvent` handlers on one serial context, and to each call's own `events()` stream.
public final class ECVSdk: Sendable {
    public let config: ECVSdkConfiguration
    public let modules: ECVModules
    let service: ServiceClient
    private let calls = Mutex<[String: VideoCall]>([:])
    /// New rtcId of a transferred leg → the caller token it keeps, until `createVideoCall(rtcId:)`
    /// takes it. Bounded: only the most recent legs are remembered.
    private let inheritedTokens = Mutex<[(rtcId: String, token: String)]>([])

    let tls: TLSSettings

    /// The instance's name: the customization guide's `ECVSdk("MyAppProdInstance", prodConfig)`
    /// names it; otherwise the configuration's `name`. For logs; calls do not depend on it.
    public let instanceName: String

    /// - Throws: `ECVConfigurationError` for a pin or CA file that cannot be honoured (nothing
    ///   is ever sent unpinned because a pin was mistyped).
    public convenience init(config: ECVSdkConfiguration) throws(ECVConfigurationError) {
        try self.init(config.name, config)
    }

    /// The customization guide's form, `ECVSdk("MyAppProdInstance", prodConfig)`: the same SDK
    /// as `init(config:)`, named `name`.
    public init(_ name: String, _ config: ECVSdkConfiguration) throws(ECVConfigurationError) {
        instanceName = name
        self.config = config
        tls = try TLSSettings(apiPins: config.pinnedCertificates, signalingPins: config.signalingPinnedCertificates,
                              trustedCAFile: config.trustedCAFile)
        try tls.requireTLS(apiURLs: [config.serviceUrl], signalingURLs: [config.webrtcUrl, config.signalingUrl])
        modules = ECVModules()
        service = ServiceClient(configuration: config, tls: tls)
    }

    /// A new call with an rtcId from the service (`GotRtcId`). On failure the call still comes back,
    /// with `lastError` set, after `Error` and `CallEnded` events.
    public func createVideoCall() async -> VideoCall? {
        let call = VideoCall(sdk: self, rtcId: "")
        call.emit(.Init)
        guard !config.serviceUrl.trimmingCharacters(in: .whitespaces).isEmpty else {
            call.fail(.SERVICE_URL_REQUIRED, "ECVSdkConfiguration.serviceUrl is empty", endingCall: true)
            return call
        }
        do {
            let rtcId = try await service.getRtcId()
            call.assign(rtcId: rtcId)
            register(call)
            call.emit(.GotRtcId, detail: rtcId)
        } catch {
            call.fail(.GET_RTC_ID_FAILED, "cannot get an rtcId from \(config.serviceUrl): \(error)", endingCall: true)
        }
        return call
    }

    /// A call for an rtcId you already have (e.g. a transferred leg's new rtcId). No request is made.
    public func createVideoCall(rtcId: String) async -> VideoCall? {
        let token = inheritedTokens.withLock { legs -> String? in
            guard let index = legs.firstIndex(where: { $0.rtcId == rtcId }) else { return nil }
            return legs.remove(at: index).token
        }
        let call = VideoCall(sdk: self, rtcId: rtcId, callerToken: token)
        call.emit(.Init)
        guard !config.serviceUrl.trimmingCharacters(in: .whitespaces).isEmpty else {
            call.fail(.SERVICE_URL_REQUIRED, "ECVSdkConfiguration.serviceUrl is empty", endingCall: true)
            return call
        }
        // Without an rtcId the call can never start (start() reports CALL_NOT_INITIALIZED), so it
        // is not registered: the SDK would otherwise keep it, and it the SDK, for ever.
        guard !rtcId.isEmpty else { return call }
        register(call)
        call.emit(.GotRtcId, detail: rtcId)
        return call
    }

    /// The live call with this rtcId, if any (calls are forgotten after `CallEnded`).
    public func getVideoCall(rtcId: String) -> VideoCall? { calls.withLock { $0[rtcId] } }

    /// The calls that have not ended yet.
    public var activeCalls: [VideoCall] { calls.withLock { Array($0.values) } }

    /// A transfer completed: its new leg keeps the caller's token (docs/protocol.md §1.9).
    func inheritCallerToken(_ token: String, forTransferredLeg rtcId: String) {
        inheritedTokens.withLock { legs in
            legs.removeAll { $0.rtcId == rtcId }
            legs.append((rtcId, token))
            if legs.count > 64 { legs.removeFirst(legs.count - 64) }
        }
    }

    private func register(_ call: VideoCall) { calls.withLock { $0[call.rtcId] = call } }

    func forget(_ call: VideoCall) {
        calls.withLock { calls in
            if calls[call.rtcId] === call { calls.removeValue(forKey: call.rtcId) }
        }
    }
}

/// Where apps hook into the SDK (`sdk.modules.onCallEvent.append { … }`).
public final class ECVModules: Sendable {
    public typealias CallEventHandler = @Sendable (VideoCall, VideoCallEvent, VideoCallEvent) -> Void

    private let handlers = CallEventHandlers()
    private let delivery = SerialDelivery()

    init() {}

    /// The handlers called for every event of every call, in order, one at a time. As in the seed:
    /// `onCallEvent.append { … }` adds one (atomically, from any thread) and `onCallEvent = []`
    /// removes them all; either, from inside a handler, takes effect from the next event.
    public var onCallEvent: CallEventHandlers {
        get { handlers }
        set { handlers.replaceAll(with: newValue) }
    }

    func deliver(_ call: VideoCall, _ event: VideoCallEvent, last: VideoCallEvent) {
        let handlers = self.handlers
        delivery.enqueue { for handler in handlers { handler(call, event, last) } }
    }
}

/// The handlers of `ECVModules.onCallEvent`: a list that is changed in place, so that
/// `onCallEvent.append { … }` from two threads at once keeps both (an array property would be
/// read, appended to and written back, and one of them lost).
public final class CallEventHandlers: Sendable, Sequence, ExpressibleByArrayLiteral {
    public typealias Handler = ECVModules.CallEventHandler
    private let list: Locked<[Handler]>

    public init(arrayLiteral handlers: Handler...) { list = Locked(handlers) }

    /// Adds `handler` after the others.
    public func append(_ handler: @escaping Handler) { list.withLock { $0.append(handler) } }
    public func removeAll() { list.withLock { $0.removeAll() } }
    public var count: Int { list.value.count }
    public var isEmpty: Bool { list.value.isEmpty }

    /// The handlers as they are now; later changes do not affect an iteration under way.
    public func makeIterator() -> IndexingIterator<[Handler]> { list.value.makeIterator() }

    func replaceAll(with other: CallEventHandlers) {
        guard other !== self else { return }
        let replacement = other.list.value
        list.withLock { $0 = replacement }
    }
}
