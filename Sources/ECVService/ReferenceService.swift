import ECVProtocol
import Foundation
import GLibCore
import Soup
import Synchronization

/// Why the reference service could not start.
public enum ReferenceServiceError: Error, Sendable, Equatable, CustomStringConvertible {
    /// `start` was called on a service that is running or was stopped (a service runs once).
    case alreadyStarted
    case invalidConfiguration(String)
    case listenFailed(String)

    public var description: String {
        switch self {
        case .alreadyStarted: "the reference service was already started (a service runs once)"
        case .invalidConfiguration(let message): "invalid reference service configuration: \(message)"
        case .listenFailed(let message): message
        }
    }
}

/// The reference ECV backend of docs/protocol.md on one HTTP port: ECV REST, the queue socket,
/// the agent API and socket, the AppRTC room server, the collider and the browser page, all
/// driven by an in-memory `ACDEngine`.
///
/// ```swift
/// let service = try ReferenceService(configuration: .init())
/// let url = try await service.start(host: "127.0.0.1", port: 0)  // http://127.0.0.1:<port>
/// …
/// await service.stop()
/// ```
public final class ReferenceService: Sendable {
    private enum Phase {
        case idle
        case running(server: HTTPServer, baseURL: URL)
        case stopped
    }

    public let configuration: ReferenceServiceConfiguration
    /// The ACD behind the service: snapshots, queue summaries, run-time reconfiguration.
    public var acd: ACDEngine { core.engine }
    /// The PeerJS peer server, when configured (`configuration.peerServer`).
    public var peerServer: PeerServer? { core.peers }
    /// Hooks that make the service misbehave on purpose, and what it counted.
    public var script: ServiceScript { core.script }
    /// What the service did, in order.
    public var log: ServiceEventLog { core.log }

    private let core: ServiceCore
    private let router: ServiceRouter
    private let phase = Mutex(Phase.idle)

    /// - Throws: `ACDError.invalidConfiguration` naming the bad setting.
    public init(configuration: ReferenceServiceConfiguration = ReferenceServiceConfiguration()) throws(ACDError) {
        self.configuration = configuration
        core = try ServiceCore(configuration: configuration)
        router = ServiceRouter(core: core)
    }

    /// Starts listening and returns the service's base URL (`serviceUrl`, `webrtcUrl`; the
    /// signaling URL is its `ws` form + `/ws`). Port 0 picks a free port. Listening on `0.0.0.0`
    /// or `::` returns a loopback URL; clients elsewhere use the machine's address.
    @discardableResult
    public func start(host: String = "127.0.0.1", port: UInt16 = 0) async throws(ReferenceServiceError) -> URL {
        let claimed = phase.withLock { phase -> Bool in
            guard case .idle = phase else { return false }
            phase = .stopped // claimed; becomes .running below, or stays stopped on failure
            return true
        }
        guard claimed else { throw .alreadyStarted }
        _ = MainLoop.shared // the server's I/O and timers run on it
        let descriptors = DescriptorLimit.raiseToHardLimit() // before the first connection is accepted
        let limits = configuration.limits
        let server = HTTPServer(tls: configuration.tls, limits: HTTPServerLimits(
            maxBodyBytes: limits.maxRequestBodyBytes, maxURLBytes: limits.maxURLBytes, maxHeaderBytes: limits.maxHeaderBytes,
            headerTimeout: limits.headerTimeout, bodyTimeout: limits.bodyTimeout,
            maxWaitingConnectionsPerAddress: limits.maxWaitingConnectionsPerAddress), maxOutgoingWebSocketBytes: limits.maxOutgoingWebSocketBytes,
            maxUnreadIncomingWebSocketBytes: limits.maxUnreadIncomingWebSocketBytes)
        let router = router
        let core = core
        server.route("*", "/") { request in await router.handle(request) }
        let keepalive = configuration.pingInterval
        if configuration.backendVersion == .v1_75 {
            server.webSocket(path: ECVAPI.queueSocket, keepaliveInterval: keepalive,
                             maxIncomingPayloadSize: limits.queueSocketFrameBytes) { connection, request in
                core.queueSockets.accept(connection, request: request, engine: core.engine)
                core.timer.refresh()
            }
        }
        server.webSocket(path: ECVAPI.agentSocket, keepaliveInterval: keepalive,
                         maxIncomingPayloadSize: limits.agentSocketFrameBytes) { connection, request in
            core.agentSockets.accept(connection, request: request, engine: core.engine, timer: core.timer)
        }
        server.webSocket(path: ECVAPI.signalingSocket, keepaliveInterval: keepalive,
                         maxIncomingPayloadSize: limits.colliderFrameBytes) { connection, request in
            core.rooms.accept(connection, token: callCredential(of: request))
        }
        core.peers?.install(on: server, keepalive: keepalive)
        let boundPort: UInt16
        do {
            boundPort = try await server.listen(host: host, port: port)
        } catch {
            await server.stop()
            throw .listenFailed(error.description)
        }
        let scheme = configuration.tls == nil ? "http" : "https"
        let baseText = "\(scheme)://\(Self.loopbackHost(for: host)):\(boundPort)"
        guard let baseURL = URL(string: baseText) else {
            await server.stop()
            throw .listenFailed("cannot form a URL from \(baseText)")
        }
        router.setFallbackBase(baseText)
        if case .system = configuration.clock {
            core.presence.start { rtcId in
                core.log.record(.rest, "the caller of \(rtcId) vanished: no socket and no poll for "
                    + "\(core.configuration.callerLossTimeout); the call ends (CALLER_LOST)", rtcId: rtcId)
                core.withEngine { $0.callerLost(rtcId: rtcId) }
            }
        }
        phase.withLock { $0 = .running(server: server, baseURL: baseURL) }
        core.timer.refresh()
        core.log.record(.lifecycle, "listening on \(host):\(boundPort) as an ECV \(configuration.backendVersion) backend")
        core.log.record(.lifecycle, DescriptorLimit.logLine(now: descriptors.now, before: descriptors.before))
        return baseURL
    }

    /// The base URL while running.
    public var baseURL: URL? {
        phase.withLock { phase in
            if case .running(_, let url) = phase { return url }
            return nil
        }
    }

    /// Ends every call (`call_ended SERVICE_SHUTDOWN` on queue and agent sockets, rooms closed
    /// with `bye`), closes the remaining sockets with 1001, waits briefly for their closing
    /// handshakes, and closes the port. Idempotent. A stopped service cannot start again.
    public func stop() async {
        let server = phase.withLock { phase -> HTTPServer? in
            defer { phase = .stopped }
            if case .running(let server, _) = phase { return server }
            return nil
        }
        guard let server else { return }
        core.log.record(.lifecycle, "stopping")
        core.engine.shutDown()
        core.timer.stop()
        core.presence.stop()
        // The SERVICE_SHUTDOWN pushes may still be on their way (another thread may be delivering);
        // what is left open is closed with 1001 only behind them.
        let core = core
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            core.engine.afterPendingEvents {
                core.queueSockets.closeAll(code: ECVCloseCode.goingAway, reason: "service shutting down")
                core.agentSockets.closeAll(code: ECVCloseCode.goingAway, reason: "service shutting down")
                core.rooms.closeAll(code: ECVCloseCode.goingAway, reason: "service shutting down")
                core.peers?.closeAll()
                continuation.resume()
            }
        }
        await waitForSockets(upTo: .seconds(2))
        await server.stop()
        core.log.record(.lifecycle, "stopped")
        core.log.finishSubscribers()
    }

    /// Changes ACD settings at run time (shorter offer timeout, entry delay, wrap-up, …) and re-arms
    /// the timers. A v1.5 service keeps transfers off whatever the change says.
    public func reconfigureACD(_ change: (inout ACDConfiguration) -> Void) throws(ACDError) {
        let isV15 = configuration.backendVersion == .v1_5
        try core.withEngine { engine throws(ACDError) in
            try engine.reconfigure { acd in
                change(&acd)
                if isV15 { acd.transfersEnabled = false }
            }
        }
        core.log.record(.lifecycle, "ACD reconfigured")
    }

    /// With a manual clock: fires what fell due after the test advanced the clock.
    public func tick() {
        core.withEngine { $0.tick() }
        for rtcId in core.presence.vanished() { core.withEngine { $0.callerLost(rtcId: rtcId) } }
    }

    /// WebSockets currently open on the service (queue, agent and collider), for leak checks.
    public var openSocketCount: Int { core.openSocketCount }

    /// Rooms that currently exist.
    public var roomCount: Int { core.rooms.roomCount }

    /// rtcIds whose queue socket is attached now.
    public var queueSocketRtcIds: [String] { core.queueSockets.attachedRtcIds }

    private func waitForSockets(upTo limit: Duration) async {
        let hubs = [core.queueSockets.open, core.agentSockets.open, core.rooms.open] + (core.peers.map { [$0.open] } ?? [])
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for hub in hubs { await hub.waitUntilEmpty() }
            }
            group.addTask {
                // Cancelled once every socket closed: the wait is over either way.
                try? await Task.sleep(for: limit)
                for hub in hubs { hub.releaseWaiters() }
            }
            await group.next()
            group.cancelAll()
            for hub in hubs { hub.releaseWaiters() }
        }
    }

    private static func loopbackHost(for host: String) -> String {
        switch host {
        case "0.0.0.0", "": "127.0.0.1"
        case "::": "[::1]"
        default: host.contains(":") ? "[\(host)]" : host
        }
    }
}
