import ECVProtocol
import Foundation

/// How a `Peer` reaches its peer server (SkyWay's `SKWPeerOption`, PeerJS's `PeerOptions`).
public struct PeerOption: Sendable {
    /// The API key (the dashboard's application key).
    public var key: String
    /// The domain this app is registered for; sent as the `Origin` of the server requests, which
    /// a key with allowed domains checks. nil: no `Origin`.
    public var domain: String?
    /// 0 none, 1 errors, 2 warnings, 3 everything (the peer's own log lines, through `Logger`).
    public var debug: Int
    public var host: String
    public var port: Int
    /// HTTPS and WSS.
    public var secure: Bool
    /// Where the server lives ("/" for a PeerJS server's default, "/peerjs" for the reference
    /// service's).
    public var path: String
    /// STUN/TURN servers; empty: the ones the server hands out in `OPEN` (ECVKit's server does),
    /// else `defaultICEServers`.
    public var iceServers: [ICEServer]
    /// What a connection uses when neither `iceServers` nor the server name any: by default
    /// PeerJS's own (`peerJSICEServers`), as a PeerJS client on the same server would; `[]` for
    /// host candidates only.
    public var defaultICEServers: [ICEServer] = PeerOption.peerJSICEServers
    /// The PeerJS client's default `config.iceServers` (PeerJS 1.5): Google's STUN server and
    /// PeerJS's public TURN servers.
    public static let peerJSICEServers = [
        ICEServer(urls: ["stun:stun.l.google.com:19302"]),
        ICEServer(urls: ["turn:eu-0.turn.peerjs.com:3478", "turn:us-0.turn.peerjs.com:3478"], username: "peerjs", credential: "peerjsp"),
    ]
    /// `.relay`: TURN-relayed candidates only (beyond SkyWay's options; a connection without a
    /// TURN server then fails at once with `invalidArgument`). Default `.all`.
    public var iceTransportPolicy: ECVProtocol.ICETransportPolicy = .all
    /// How long a data connection's transport may bring nothing at all before its far end counts
    /// as vanished (killed, its network gone: no close of any kind arrives) and the connection
    /// ends with an error. An idle connection carries only SCTP heartbeats, one exchange about
    /// every 32 s (measured between two ECVKit peers), so the default outlasts one lost exchange
    /// (docs/protocol.md §8.7). A call ends sooner, after 10 s without media or RTCP. PeerJS in a
    /// browser notices through ICE consent (about 30 s), which libnice as webrtcbin 1.22 sets it
    /// up does not check.
    public var dataConnectionSilenceLimit: Duration = PeerOption.defaultDataConnectionSilenceLimit
    static let defaultDataConnectionSilenceLimit = Duration.seconds(70)
    /// How often the peer tells the server it is alive (PeerJS: 5 s).
    public var heartbeatInterval: Duration
    /// How long connecting to the server may take.
    public var connectTimeout: Duration

    public init(key: String, domain: String? = nil, debug: Int = 0, host: String = "127.0.0.1", port: Int = 9000,
                secure: Bool = false, path: String = "/", iceServers: [ICEServer] = [],
                heartbeatInterval: Duration = .seconds(5), connectTimeout: Duration = .seconds(5)) {
        self.key = key
        self.domain = domain
        self.debug = debug
        self.host = host
        self.port = port
        self.secure = secure
        self.path = path
        self.iceServers = iceServers
        self.heartbeatInterval = heartbeatInterval
        self.connectTimeout = connectTimeout
    }

    /// The options for a server URL such as `http://127.0.0.1:8080/peerjs`.
    public init(key: String, serverURL: String, domain: String? = nil) throws(PeerError) {
        guard let url = URLComponents(string: serverURL), let scheme = url.scheme?.lowercased(), ["http", "https", "ws", "wss"].contains(scheme),
              let host = url.host, !host.isEmpty else {
            throw PeerError(.invalidArgument, "\(serverURL) is not an http(s):// or ws(s):// URL of a peer server")
        }
        let secure = scheme == "https" || scheme == "wss"
        self.init(key: key, domain: domain, host: host, port: url.port ?? (secure ? 443 : 80), secure: secure,
                  path: url.path.isEmpty ? "/" : url.path)
    }

    /// Why these options cannot be used, or nil: a port outside 1...65535, or a duration that is
    /// not positive (a zero heartbeat would flood the server, a zero silence limit would end
    /// every data connection at once).
    func problem() -> String? {
        guard (1...65535).contains(port) else { return "port \(port) is not a TCP port (1...65535)" }
        for (name, value) in [("heartbeatInterval", heartbeatInterval), ("connectTimeout", connectTimeout),
                              ("dataConnectionSilenceLimit", dataConnectionSilenceLimit)] where value <= .zero {
            return "\(name) must be positive, not \(value)"
        }
        return nil
    }

    /// `path` ending in exactly one "/".
    var normalizedPath: String {
        var path = self.path.hasPrefix("/") ? self.path : "/" + self.path
        while path.hasSuffix("//") { path.removeLast() }
        if !path.hasSuffix("/") { path += "/" }
        return path
    }

    var hostPart: String { host.contains(":") && !host.hasPrefix("[") ? "[\(host)]:\(port)" : "\(host):\(port)" }
    var httpBase: String { "\(secure ? "https" : "http")://\(hostPart)\(normalizedPath)" }
    var webSocketBase: String { "\(secure ? "wss" : "ws")://\(hostPart)\(normalizedPath)" }
    var origin: String? { domain.map { "\(secure ? "https" : "http")://\($0)" } }
}
