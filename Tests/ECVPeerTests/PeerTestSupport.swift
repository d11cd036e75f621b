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
    func openPeer(id: String? = nil, key: String = "demo") async throws -> (Peer, Events<PeerEvent>) {
        let peer = Peer(id: id, options: options(key: key))
        let events = Events(peer.events())
        try await events.first("OPEN") { if case .open = $0 { true } else { false } }
        return (peer, events)
    }

    func stop() async { await service.stop() }
}

/// Everything a stream delivered so far, and waiting for what is to come.
final class Events<Event: Sendable>: Sendable {
    private let seen = Locked<[Event]>([])
    private let task: Task<Void, Never>

    init(_ stream: AsyncStream<Event>) {
        let seen = self.seen
        task = Task { for await event in stream { seen.withLock { $0.append(event) } } }
    }

    deinit { task.cancel() }

    var all: [Event] { seen.withLock { $0 } }

    /// The first event matching `match`, waiting up to `timeout` for it.
    @discardableResult
    func first(_ what: String, timeout: Duration = .seconds(20), _ match: @escaping @Sendable (Event) -> Bool) async throws -> Event {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let found = seen.withLock({ $0.first(where: match) }) { return found }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw TestFailure("no \(what) within \(timeout); saw \(all)")
    }
}

extension PeerEvent {
    var call: MediaConnection? { if case .call(let connection) = self { connection } else { nil } }
    var dataConnection: DataConnection? { if case .connection(let connection) = self { connection } else { nil } }
    var error: PeerError? { if case .error(let error) = self { error } else { nil } }
}

extension MediaConnectionEvent {
    var stream: MediaStream? { if case .stream(let stream) = self { stream } else { nil } }
    var isClose: Bool { if case .close = self { true } else { false } }
    var error: PeerError? { if case .error(let error) = self { error } else { nil } }
}
