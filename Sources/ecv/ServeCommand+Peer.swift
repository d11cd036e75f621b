import ECVProtocol
import ECVService

/// The peer server's options of `ecv serve` (docs/protocol.md §8).
enum PeerServeOptions {
    static let spec = OptionSpec(values: ["peer-key", "peer-path", "peer-limit"], flags: ["peer-discovery"])

    static let help = """
          --peer-key KEY[:DOMAIN,…]   run the PeerJS peer server with this API key (repeatable); with domains,
                                   only pages from them (their Origin) may use it
          --peer-path PATH         where the peer server lives (default /peerjs: GET /peerjs/<key>/id, WS /peerjs/peerjs)
          --peer-discovery         let peers list each other (GET <path>/<key>/peers; off by default, as in PeerJS)
          --peer-limit N           peers per key at once (default 5000)
        """

    static func apply(_ arguments: inout Arguments, to configuration: inout ReferenceServiceConfiguration) throws(CLIError) {
        let keys = arguments.values("peer-key"), path = arguments.value("peer-path"), discovery = arguments.flag("peer-discovery")
        let limit = try arguments.int("peer-limit")
        guard !keys.isEmpty else {
            if path != nil || discovery || limit != nil { throw .usage("--peer-path, --peer-discovery and --peer-limit need --peer-key") }
            return
        }
        var peer = PeerServerConfiguration(path: path ?? "/peerjs")
        for text in keys {
            do {
                var key = try PeerAPIKey(parsing: text, allowDiscovery: discovery)
                if let limit { key.concurrentLimit = limit }
                peer.keys.append(key)
            } catch {
                throw .usage(error.description)
            }
        }
        configuration.peerServer = peer
    }
}
