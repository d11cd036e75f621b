import ECVPeer
import ECVService
import ECVTestSupport
import Foundation
import GLibCore
import Testing

/// A reference service with a peer server on loopback: key `demo` (discovery on, any origin),
/// key `web` (only pages from `allowed.example`), key `small` (two peers at most).
struct PeerBackend: Sendable {
    let service: ReferenceService
    let url: URL

    static func start(configure: (inout PeerServerConfiguration) -> Void = { _ in }) async throws -> PeerBackend {
        _ = TestRuntime.ready
        var configuration = ReferenceServiceConfiguration()
        var peer = PeerServerConfiguration(keys: [
            PeerAPIKey(key: "demo", allowDiscovery: true),
            PeerAPIKey(key: "web", domains: ["allowed.example"]),
            PeerAPIKey(key: "small", concurrentLimit: 2),
        ])
        configure(&peer)
        configuration.peerServer = peer
        let service = try ReferenceService(configuration: configuration)
        let url = try await service.start(host: "127.0.0.1", port: 0)
        return PeerBackend(service: service, url: url)
    }

    var port: Int { url.port ?? 0 }

    func options(key: String = "demo", domain: String? = nil) -> PeerOption {
        PeerOption(key: key, domain: domain, host: "127.0.0.1", port: port, path: "/peerjs")
    }

    /// A peer that reached OPEN.
    func openPeer(id: String? = nil, key: String = "demo", configure: (inout PeerOption) -> Void = { _ in }) async throws -> (Peer, Events<PeerEvent>) {
        var options = options(key: key)
        configure(&options)
        let peer = Peer(id: id, options: options)
        let events = Events(peer.events())
        try await events.first("OPEN") { if case .open = $0 { true } else { false } }
        return (peer, events)
    }

    func stop() async { await service.stop() }
}

