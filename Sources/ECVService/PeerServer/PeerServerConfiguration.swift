import ECVProtocol
import Foundation

/// One API key of the peer server (SkyWay's dashboard application): which page origins may use
/// it and how many peers it may have connected at once.
public struct PeerAPIKey: Sendable, Hashable {
    public var key: String
    /// Hosts a browser page may be served from to use this key (its `Origin`); empty: any
    /// origin, and clients without one. A key with domains refuses clients without an `Origin`.
    public var domains: [String]
    /// Peers of this key connected at once; the next one is refused with an `ERROR`.
    public var concurrentLimit: Int
    /// Whether `GET <path>/<key>/peers` lists this key's peers (PeerJS's `allow_discovery`).
    public var allowDiscovery: Bool

    public init(key: String, domains: [String] = [], concurrentLimit: Int = 5000, allowDiscovery: Bool = false) {
        self.key = key
        self.domains = domains
        self.concurrentLimit = concurrentLimit
        self.allowDiscovery = allowDiscovery
    }

    /// `KEY` or `KEY:domain,domain` (`ecv serve --peer-key`).
    public init(parsing text: String, allowDiscovery: Bool = false) throws(ReferenceServiceError) {
        let parts = text.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
        let domains = parts.count > 1 ? parts[1].split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() } : []
        self.init(key: parts[0], domains: domains, allowDiscovery: allowDiscovery)
        if let problem = problem() { throw .invalidConfiguration("--peer-key \(text): \(problem)") }
    }

    /// Whether a client presenting `origin` (the `Origin` header, or nil) may use this key. The
    /// header must be a serialized origin, `scheme://host[:port]` and nothing else: a URL parser
    /// reads `http://evil.com\@allowed.example` as user `evil.com\` at host `allowed.example`.
    func admits(origin: String?) -> Bool {
        guard !domains.isEmpty else { return true }
        guard let origin, let host = serializedOriginHost(origin) else { return false }
        return domains.contains(host)
    }

    func problem() -> String? {
        if !PeerJSLimits.isValidId(key) { return "the key \"\(key.prefix(80))\" is not letters and digits (with single - _ or space between)" }
        if concurrentLimit < 1 { return "concurrentLimit must be at least 1" }
        if let bad = domains.first(where: { $0.isEmpty || $0.utf8.count > 253 || $0.contains("/") || $0.contains(":") }) {
            return "\"\(bad)\" is not a host name"
        }
        return nil
    }
}

/// The PeerJS-compatible peer server of the reference service (docs/protocol.md §8).
public struct PeerServerConfiguration: Sendable {
    /// Where the server lives: `GET <path>/<key>/id`, `GET <path>/<key>/peers`, the socket at
    /// `<path>/peerjs`. Not "/" (the ECV endpoints live there).
    public var path: String
    public var keys: [PeerAPIKey]
    /// How long messages for a peer that is not connected are held before the senders get
    /// `EXPIRE` (PeerJS's `expire_timeout`).
    public var expireTimeout: Duration
    /// A peer that sends nothing (not even `HEARTBEAT`) for this long is dropped (PeerJS's
    /// `alive_timeout`; clients beat every 5 s).
    public var aliveTimeout: Duration
    /// A peer whose socket dropped keeps its id this long for a reconnect with its token.
    public var leaveGrace: Duration
    /// Whether the peers a dropped peer talked to hear `LEAVE` when it is removed (its grace ran
    /// out, or it sent nothing for `aliveTimeout`). peerjs-server never sends this, and PeerJS
    /// clients close every connection with a peer on `LEAVE`, though their calls outlive a
    /// signaling blip: off by default. A peer that sends `LEAVE` without `dst` is always announced.
    public var announcesDroppedPeers = false
    /// Messages held per absent peer; more are refused (the sender gets `EXPIRE` at once).
    public var maxHeldMessagesPerPeer: Int
    /// Messages held for all absent peers together (so offers to many made-up ids cannot pile up).
    public var maxHeldMessages = 16_384
    /// The same in bytes (each message as the frame that brought it): per absent peer, and for all
    /// of them together. An offer with its candidates takes some 10 KiB; a frame at most 64 KiB.
    public var maxHeldBytesPerPeer = 512 << 10
    public var maxHeldBytes = 32 << 20
    /// Peers any one peer is remembered to have talked to (who hears its `LEAVE`).
    public var maxContactsPerPeer: Int
    /// Handed to every peer in its `OPEN`; nil: the service's `iceServers`.
    public var iceServers: [ICEServer]?

    public init(path: String = "/peerjs", keys: [PeerAPIKey] = [], expireTimeout: Duration = .seconds(5),
                aliveTimeout: Duration = .seconds(60), leaveGrace: Duration = .seconds(2), maxHeldMessagesPerPeer: Int = 64,
                maxContactsPerPeer: Int = 256, iceServers: [ICEServer]? = nil) {
        self.path = path
        self.keys = keys
        self.expireTimeout = expireTimeout
        self.aliveTimeout = aliveTimeout
        self.leaveGrace = leaveGrace
        self.maxHeldMessagesPerPeer = maxHeldMessagesPerPeer
        self.maxContactsPerPeer = maxContactsPerPeer
        self.iceServers = iceServers
    }

    /// `path` without a trailing slash, always with a leading one.
    var normalizedPath: String {
        var result = path.hasPrefix("/") ? path : "/" + path
        while result.count > 1 && result.hasSuffix("/") { result.removeLast() }
        return result
    }

    /// The line `ecv serve` prints for the peer server.
    func bannerLine(base: String, ws: String) -> String {
        let path = normalizedPath
        let keys = self.keys.map { $0.key + ($0.domains.isEmpty ? "" : " (" + $0.domains.joined(separator: ", ") + ")")
            + ($0.allowDiscovery ? " [discovery]" : "") }
        return "  peer server    \(base)\(path)/<key>/id, \(ws)\(path)/peerjs?key=&id=&token=, page \(base)\(path)/client   keys: "
            + keys.joined(separator: ", ")
    }

    func problem() -> String? {
        let path = normalizedPath
        if path == "/" { return "the peer server's path must not be / (the ECV endpoints live there)" }
        let first = path.split(separator: "/").first.map(String.init) ?? ""
        if ["api", "agent", "join", "message", "leave", "r", "ws"].contains(first) { return "the peer server's path \(path) is an ECV endpoint" }
        if path.utf8.count > 128 || !path.unicodeScalars.allSatisfy({ $0.isASCII && (CharacterSet.alphanumerics.contains($0) || "/-_".unicodeScalars.contains($0)) }) {
            return "the peer server's path \(path) must be letters, digits, - _ and /"
        }
        if keys.isEmpty { return "the peer server needs at least one API key" }
        for key in keys { if let problem = key.problem() { return "peer key \(key.key): \(problem)" } }
        if Set(keys.map(\.key)).count != keys.count { return "a peer key is listed twice" }
        if expireTimeout <= .zero || aliveTimeout <= .zero || leaveGrace < .zero { return "peer server timeouts must be positive" }
        if [maxHeldMessagesPerPeer, maxContactsPerPeer, maxHeldMessages, maxHeldBytesPerPeer, maxHeldBytes].contains(where: { $0 < 1 }) {
            return "peer server bounds must be at least 1"
        }
        return nil
    }
}
