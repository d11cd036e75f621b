import Synchronization

extension ECVSdk {
    /// The troubleshooting guide's process-wide instance: `ECVSdk.shared.initialize(config:)`
    /// once, then `ECVSdk.shared.sdk` (or the forwarding calls) anywhere. A thin convenience over
    /// `ECVSdk(config:)`; apps that keep their own instance (the demo's `AppState`) need none of it.
    public static let shared = SharedECVSdk()
}

/// Holds the one `ECVSdk` of `ECVSdk.shared`.
public final class SharedECVSdk: Sendable {
    private let current = Mutex<ECVSdk?>(nil)

    init() {}

    /// Creates the shared instance (replacing a previous one: calls already made keep the SDK
    /// that made them) and returns it.
    /// - Throws: what `ECVSdk(config:)` throws; the previous instance then stays.
    @discardableResult
    public func initialize(config: ECVSdkConfiguration) throws(ECVConfigurationError) -> ECVSdk {
        let sdk = try ECVSdk(config: config)
        current.withLock { $0 = sdk }
        return sdk
    }

    /// The shared instance; nil before `initialize(config:)` (the guide's "SDK Not Initialized").
    public var sdk: ECVSdk? { current.withLock { $0 } }

    /// Whether `initialize(config:)` succeeded.
    public var isInitialized: Bool { sdk != nil }

    /// `sdk.modules`; nil before `initialize(config:)`.
    public var modules: ECVModules? { sdk?.modules }

    /// `sdk.createVideoCall()`; nil before `initialize(config:)`.
    public func createVideoCall() async -> VideoCall? { await sdk?.createVideoCall() }

    /// `sdk.createVideoCall(rtcId:)`; nil before `initialize(config:)`.
    public func createVideoCall(rtcId: String) async -> VideoCall? { await sdk?.createVideoCall(rtcId: rtcId) }

    /// `sdk.getVideoCall(rtcId:)`; nil before `initialize(config:)`.
    public func getVideoCall(rtcId: String) -> VideoCall? { sdk?.getVideoCall(rtcId: rtcId) }
}
