import ECVProtocol
import WebRTC

/// Where the ECV backend is and how to wait in its queue (the seed's `ECVSdkConfiguration`).
///
/// `webrtcUrl` defaults to `serviceUrl`. `signalingUrl` (the property reads `serviceUrl` when not
/// given) is used only when given and different from `serviceUrl`: otherwise the signaling socket
/// is the join answer's `wss_url`, as AppRTC rooms name it. The polling delays default to 3000 ms. The queue
/// wait picks, by precedence: queue socket (`useQueueSocket`, v1.75+) > queue-info polling
/// (`useQueueInfo`) > legacy `WaitForRoomInterval` polling (v1.5).
public struct ECVSdkConfiguration: Sendable {
    public var name: String
    public var serviceUrl: String
    public var useQueueSocket: Bool
    public var webrtcUrl: String
    public var signalingUrl: String
    /// Legacy polling interval, milliseconds.
    public var waitForRoomIntervalDelay: Int
    /// Legacy polling endpoint: a full URL or a path on `serviceUrl`, ending with the query key
    /// to which the rtcId is appended.
    public var waitForRoomIntervalEndpoint: String
    public var useQueueInfo: Bool
    /// Queue-info polling interval, milliseconds.
    public var queueInfoIntervalDelay: Int
    /// Queue-info endpoint path or URL; `?rtcId=` is appended unless it already has a query.
    public var queueInfoEndpoint: String
    /// Mute local media while the agent holds the call, restoring the previous state on pickup.
    /// The setting's home; a call's `ConnectParameters.autoHandleHoldSideEffects` can choose
    /// otherwise for that call.
    public var autoHandleHoldSideEffects: Bool

    /// ICE servers used in addition to those of the join answer (the answer's come first).
    public var iceServers: [ECVProtocol.ICEServer]
    /// Every call's ICE transport policy unless its `ConnectParameters` says otherwise: `.all`
    /// (the default) or `.relay` (TURN-relayed candidates only).
    public var iceTransportPolicy: ECVProtocol.ICETransportPolicy = .all
    /// Pins the API's TLS certificate (`serviceUrl`: REST and the queue socket) must match, in any
    /// form of docs/protocol.md §0.2: `sha256/<base64>` (public key), 64 hex digits (certificate),
    /// a certificate file, or Base64 DER. A malformed pin makes `ECVSdk(config:)` throw.
    public var pinnedCertificates: [String]
    /// Pins for signaling (`webrtcUrl`, `signalingUrl`: rooms and the collider); empty: the
    /// API's pins apply there too.
    public var signalingPinnedCertificates: [String] = []
    /// A PEM file of CA certificates trusted instead of the system store (a private CA).
    public var trustedCAFile: String?
    /// HTTP connect and read timeouts for the REST calls (the `/join` ones are in ConnectParameters).
    public var httpTimeoutMs: Int
    /// How long the SDK keeps trying to reach the service again after a transient failure
    /// (beyond the seed; docs/protocol.md §9): a REST request or a `/join` is retried with jittered
    /// exponential backoff, a dropped queue or signaling socket is reconnected and re-registered,
    /// for at most this long (each attempt keeps its own timeout). 0: no retries, no reconnection.
    public var reconnectWindowMs: Int = 10_000
    /// Consecutive polling failures tolerated before the wait fails (`ERROR_WAITING_FOR_ROOM`).
    public var pollingFailureLimit: Int
    /// Consecutive `not found` answers tolerated while polling before the wait fails
    /// (`ERROR_WAITING_FOR_ROOM`, then `CallEnded`). The seed's troubleshooting table treats
    /// `not found` as a backend that has not caught up with the call yet, not as an end: any other
    /// answer resets the count (docs/protocol.md §1.5).
    public var notFoundPollLimit: Int
    /// The seed's defaults, shared by both initialisers (milliseconds; the endpoint is a path on
    /// `serviceUrl`).
    public static let defaultWaitForRoomIntervalDelay = 3000
    public static let defaultQueueInfoIntervalDelay = 3000
    public static let defaultQueueInfoEndpoint = ECVAPI.waitForRoomQueueInterval

    /// Whether `signalingUrl` was given explicitly (then it wins over the join answer's `wss_url`).
    let signalingUrlIsExplicit: Bool

    /// The one initialiser that sets the fields; the seed-ordered one below forwards to it.
    public init(name: String, serviceUrl: String, useQueueSocket: Bool = true, webrtcUrl: String? = nil,
                signalingUrl: String? = nil, waitForRoomIntervalDelay: Int = defaultWaitForRoomIntervalDelay,
                waitForRoomIntervalEndpoint: String? = nil, useQueueInfo: Bool = false,
                queueInfoIntervalDelay: Int = defaultQueueInfoIntervalDelay,
                queueInfoEndpoint: String = defaultQueueInfoEndpoint, autoHandleHoldSideEffects: Bool = true,
                iceServers: [ECVProtocol.ICEServer] = [], pinnedCertificates: [String] = [], httpTimeoutMs: Int = 5000,
                pollingFailureLimit: Int = 3, notFoundPollLimit: Int = 3) {
        self.name = name
        self.serviceUrl = serviceUrl
        self.useQueueSocket = useQueueSocket
        self.webrtcUrl = webrtcUrl ?? serviceUrl
        self.signalingUrl = signalingUrl ?? serviceUrl
        signalingUrlIsExplicit = signalingUrl != nil && signalingUrl != serviceUrl
        self.waitForRoomIntervalDelay = waitForRoomIntervalDelay
        self.waitForRoomIntervalEndpoint = waitForRoomIntervalEndpoint
            ?? ECVAPI.url(base: serviceUrl, path: ECVAPI.waitForRoomInterval + "?" + ECVAPI.rtcIdQueryName + "=")
        self.useQueueInfo = useQueueInfo
        self.queueInfoIntervalDelay = queueInfoIntervalDelay
        self.queueInfoEndpoint = queueInfoEndpoint
        self.autoHandleHoldSideEffects = autoHandleHoldSideEffects
        self.iceServers = iceServers
        self.pinnedCertificates = pinnedCertificates
        self.httpTimeoutMs = httpTimeoutMs
        self.pollingFailureLimit = pollingFailureLimit
        self.notFoundPollLimit = notFoundPollLimit
    }

    /// The seed's other order: its separate-endpoints example (`configSeparateV15`) names
    /// `webrtcUrl` and `signalingUrl` *before* `useQueueSocket`, and Swift takes labelled
    /// arguments only in declaration order. `webrtcUrl` and `useQueueSocket` have no defaults here,
    /// so a call that could mean either initialiser never resolves to this one: calls with some
    /// or none of the arguments, in the main order, stay unambiguous. The parameters are the
    /// seed's, in the seed's order; the SDK's own additions (ICE servers, pins, timeouts) are
    /// only in the main initialiser.
    public init(name: String, serviceUrl: String, webrtcUrl: String?, signalingUrl: String? = nil, useQueueSocket: Bool,
                waitForRoomIntervalDelay: Int = defaultWaitForRoomIntervalDelay, waitForRoomIntervalEndpoint: String? = nil,
                useQueueInfo: Bool = false, queueInfoIntervalDelay: Int = defaultQueueInfoIntervalDelay,
                queueInfoEndpoint: String = defaultQueueInfoEndpoint, autoHandleHoldSideEffects: Bool = true) {
        self.init(name: name, serviceUrl: serviceUrl, useQueueSocket: useQueueSocket, webrtcUrl: webrtcUrl, signalingUrl: signalingUrl,
                  waitForRoomIntervalDelay: waitForRoomIntervalDelay, waitForRoomIntervalEndpoint: waitForRoomIntervalEndpoint,
                  useQueueInfo: useQueueInfo, queueInfoIntervalDelay: queueInfoIntervalDelay, queueInfoEndpoint: queueInfoEndpoint,
                  autoHandleHoldSideEffects: autoHandleHoldSideEffects)
    }

    /// An endpoint given as a path is resolved against `base`.
    static func resolve(_ endpoint: String, base: String) -> String {
        endpoint.hasPrefix("http://") || endpoint.hasPrefix("https://") ? endpoint : ECVAPI.url(base: base, path: endpoint)
    }

    var legacyPollingPrefix: String { Self.resolve(waitForRoomIntervalEndpoint, base: serviceUrl) }

    var queueInfoPollingPrefix: String {
        let resolved = Self.resolve(queueInfoEndpoint, base: serviceUrl)
        return resolved.contains("?") ? resolved : resolved + "?" + ECVAPI.rtcIdQueryName + "="
    }
}
