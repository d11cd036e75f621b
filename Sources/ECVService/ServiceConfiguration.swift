import ECVProtocol
import Foundation
import Soup

/// Which ECV backend generation the reference service plays (docs/protocol.md §6).
public enum BackendVersion: String, Sendable, CaseIterable, CustomStringConvertible {
    /// Polling only: the queue socket, `WaitForRoomQueueInterval` and `/api/Queues` answer 404,
    /// and agents' transfers fail with `TRANSFER_UNSUPPORTED`.
    case v1_5 = "1.5"
    /// Everything: queue socket, queue-info polling, queue overview, transfers.
    case v1_75 = "1.75"

    public var description: String { rawValue }
}

/// Where the service's ACD reads the time. A manual clock lets tests script offer timeouts and
/// retention without waiting; the service then runs no timers and the test calls
/// `ReferenceService.tick()` after advancing the clock.
public enum ServiceClock: Sendable {
    case system
    case manual(ManualACDClock)

    var acdClock: any ACDClock {
        switch self {
        case .system: SystemACDClock()
        case .manual(let clock): clock
        }
    }
}

/// One header of an HTTP request as the service received it.
public struct RequestHeader: Sendable, Hashable {
    public var name: String
    public var value: String

    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }
}

/// What an authentication hook sees of a DialEx: the decoded body and every HTTP header, where
/// the SDK's `additionalHeaders` travel.
public struct DialAuthorizationRequest: Sendable, Equatable {
    public var dial: DialExRequest
    public var headers: [RequestHeader]

    /// The first value of header `name` (case-insensitive).
    public func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }
}

/// An error answer a hook or a script chooses: an HTTP status and the ECV error body.
public struct ServiceRejection: Error, Sendable, Equatable, CustomStringConvertible {
    public var status: Int
    public var body: ServiceErrorResponse

    public init(status: Int, code: ServiceErrorCode, message: String) {
        self.status = status
        self.body = ServiceErrorResponse(code: code, message: message)
    }

    public static func unauthorized(_ message: String = "missing or invalid credentials") -> ServiceRejection {
        ServiceRejection(status: 401, code: .unauthorized, message: message)
    }

    public var description: String { "\(status) \(body.code): \(body.message)" }
}

/// Decides whether a DialEx may proceed; nil lets it through. Runs before the ACD sees the call.
public typealias DialAuthenticator = @Sendable (DialAuthorizationRequest) -> ServiceRejection?

/// Everything that makes one reference service differ from another.
public struct ReferenceServiceConfiguration: Sendable {
    public var backendVersion: BackendVersion
    /// Queues, offer timeout, wrap-up, entry delay, retention of ended calls and issued rtcIds,
    /// `acceptsUnissuedRtcIds`, id style. `transfersEnabled` is forced off for v1.5.
    public var acd: ACDConfiguration
    /// Agent Login must present one of these secrets (else `401 UNAUTHORIZED`). Empty: no agent
    /// can log in, unless `openAgents` says anyone may.
    public var agentSecrets: [String]
    /// Lets agents log in without a secret while `agentSecrets` is empty (demos, tests, labs).
    /// Off by default: a service nobody configured admits no agents.
    public var openAgents = false
    /// Advertised in every join answer's `pc_config`. Empty by default: the reference service runs
    /// no STUN responder, and loopback or LAN calls connect over host candidates, so clients
    /// supply their own servers when they need any (docs/protocol.md §5.2).
    public var iceServers: [ICEServer]
    /// WebSocket ping interval on the queue, agent and collider sockets (libsoup keep-alive).
    public var pingInterval: Duration
    /// False: `WaitForRoomQueueInterval` answers without `position`/`ewtSeconds`, as a 1.75
    /// backend without a statistics source does.
    public var queueStatistics: Bool
    /// The base URL put into join answers and the browser page (`wss_url`, `wss_post_url`,
    /// `room_link`). Nil: derived from each request's `Host` header, so LAN clients get URLs that
    /// reach them.
    public var advertisedBaseURL: String?
    /// Addresses of TLS-terminating proxies in front of this service: a request from one of them
    /// with `X-Forwarded-Proto: https` gets `https://`/`wss://` URLs (else a plain-HTTP service
    /// behind the proxy would send its clients to `ws://`, in the clear). Numeric addresses as
    /// the proxy connects from; `X-Forwarded-Proto` from anyone else is ignored.
    public var trustedProxies: [String] = []
    public var clock: ServiceClock
    /// Serve HTTPS and WSS with this identity.
    public var tls: TLSIdentity?
    /// Checks DialEx requests (their headers carry the SDK's `additionalHeaders`). The reference
    /// default accepts everything.
    public var dialAuthenticator: DialAuthenticator?
    /// Receives every event-log entry as it happens (the CLI prints them); the service never
    /// prints on its own.
    public var logHandler: (@Sendable (ServiceLogEntry) -> Void)?
    /// How many recent entries `ReferenceService.log` keeps.
    public var logCapacity: Int
    /// Bounds on everything clients send (docs/protocol.md §0.1).
    public var limits = ServiceLimits()
    /// How long a dialed call's caller may hold neither its queue socket nor its signaling socket
    /// without polling before the call ends with `CALLER_LOST` (docs/protocol.md §1.7).
    public var callerLossTimeout: Duration = .seconds(10)
    /// The identity-verification back office (EnQualify; docs/protocol.md §7). Closed (no API key) by default.
    public var verification = VerificationBackOfficeConfiguration()
    /// The PeerJS-compatible peer server (docs/protocol.md §8); nil: none.
    public var peerServer: PeerServerConfiguration?

    public init(backendVersion: BackendVersion = .v1_75, acd: ACDConfiguration = ACDConfiguration(),
                agentSecrets: [String] = [], iceServers: [ICEServer] = [], pingInterval: Duration = .seconds(20),
                queueStatistics: Bool = true, advertisedBaseURL: String? = nil, clock: ServiceClock = .system,
                tls: TLSIdentity? = nil, dialAuthenticator: DialAuthenticator? = nil,
                logHandler: (@Sendable (ServiceLogEntry) -> Void)? = nil, logCapacity: Int = 10_000) {
        self.backendVersion = backendVersion
        self.acd = acd
        self.agentSecrets = agentSecrets
        self.iceServers = iceServers
        self.pingInterval = pingInterval
        self.queueStatistics = queueStatistics
        self.advertisedBaseURL = advertisedBaseURL
        self.clock = clock
        self.tls = tls
        self.dialAuthenticator = dialAuthenticator
        self.logHandler = logHandler
        self.logCapacity = logCapacity
    }

    // Shortcuts into `acd` for the settings people change most.

    public var queues: [String] {
        get { acd.queues }
        set { acd.queues = newValue }
    }

    public var defaultQueue: String {
        get { acd.defaultQueue }
        set { acd.defaultQueue = newValue }
    }

    /// Seconds an offer rings before it is withdrawn.
    public var offerTimeout: Double {
        get { acd.offerTimeout }
        set { acd.offerTimeout = newValue }
    }

    /// Seconds an ended call's outcome stays answerable.
    public var endedCallRetention: Double {
        get { acd.endedCallRetention }
        set { acd.endedCallRetention = newValue }
    }

    /// Caller tokens (docs/protocol.md §1.9); on unless switched off explicitly.
    public var issuesCallerTokens: Bool {
        get { acd.issuesCallerTokens }
        set { acd.issuesCallerTokens = newValue }
    }

    public var acceptsUnissuedRtcIds: Bool {
        get { acd.acceptsUnissuedRtcIds }
        set { acd.acceptsUnissuedRtcIds = newValue }
    }

    /// Serves HTTPS and WSS with a PEM certificate (the chain may follow the leaf) and its key.
    /// - Throws: `ReferenceServiceError.invalidConfiguration` when they cannot be loaded.
    public mutating func serveTLS(certificateFile: String, privateKeyFile: String) throws(ReferenceServiceError) {
        do { tls = try TLSIdentity(certificateFile: certificateFile, privateKeyFile: privateKeyFile) } catch {
            throw .invalidConfiguration(error.description)
        }
    }

    /// The ACD configuration the engine actually runs: v1.5 has no transfers.
    var effectiveACD: ACDConfiguration {
        var effective = acd
        if backendVersion == .v1_5 { effective.transfersEnabled = false }
        return effective
    }

    /// Why the configuration cannot run, or nil (the service refuses to start with it; the CLI
    /// asks first, to fail before anything listens).
    public func problem() -> String? {
        if pingInterval < .zero { return "pingInterval must not be negative" }
        if logCapacity < 1 { return "logCapacity must be at least 1" }
        if let problem = limits.problem() { return problem }
        // Attached-data defaults join a DialEx's own attributes in the offer frame.
        let defaultsBytes = acd.allAttributeDefaults.map { map in
            map.reduce(0) { $0 + ($1.key.utf8.count + $1.value.utf8.count + 6) * 6 }
        }.max() ?? 0
        if limits.worstCaseOfferFrameBytes + defaultsBytes > limits.agentClientFrameBytes {
            return "the attribute defaults and the DialEx field limits allow offer frames of "
                + "\(limits.worstCaseOfferFrameBytes + defaultsBytes) bytes, more than limits.agentClientFrameBytes "
                + "(\(limits.agentClientFrameBytes))"
        }
        if callerLossTimeout <= .zero { return "callerLossTimeout must be positive" }
        if let problem = peerServer?.problem() { return problem }
        if let base = advertisedBaseURL, !(base.hasPrefix("http://") || base.hasPrefix("https://")) {
            return "advertisedBaseURL \"\(base)\" must start with http:// or https://"
        }
        if let proxy = trustedProxies.first(where: { !Self.isNumericAddress($0) }) {
            return "trusted proxy \"\(proxy)\" is not a numeric IPv4 or IPv6 address"
        }
        return nil
    }
}

extension ReferenceServiceConfiguration {
    static func isNumericAddress(_ text: String) -> Bool {
        var v4 = in_addr(), v6 = in6_addr()
        return inet_pton(AF_INET, text, &v4) == 1 || inet_pton(AF_INET6, text, &v6) == 1
    }
}
