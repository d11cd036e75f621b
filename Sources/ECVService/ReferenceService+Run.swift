import ECVProtocol
import Foundation
import Synchronization

extension ReferenceService {
    /// The standalone entry point (`ecv serve --port N`): starts the service, hands the startup
    /// banner to `announce`, serves until the calling task is cancelled (the CLI cancels it on
    /// SIGINT/SIGTERM), then stops cleanly. Log entries go to `configuration.logHandler`.
    public static func runForever(configuration: ReferenceServiceConfiguration = ReferenceServiceConfiguration(),
                                  host: String = "127.0.0.1", port: UInt16 = 8080,
                                  announce: @Sendable (String) -> Void = { print($0) }) async throws {
        let service = try ReferenceService(configuration: configuration)
        try await service.start(host: host, port: port)
        announce(service.banner(listeningOn: host))
        let gate = CancellationGate()
        await withTaskCancellationHandler {
            await gate.wait()
        } onCancel: {
            gate.open()
        }
        await service.stop()
    }

    /// A human-readable summary of where everything is, for a console.
    public func banner(listeningOn host: String? = nil) -> String {
        guard let base = baseURL?.absoluteString else { return "ECV reference service (not running)" }
        let ws = ECVAPI.webSocketBase(base)
        let configuration = configuration
        let queues = configuration.acd.validatedQueues.map { $0 == configuration.defaultQueue ? "\($0) (default)" : $0 }
        let ice = configuration.iceServers.isEmpty
            ? "none advertised (clients use their own; loopback and LAN calls need none)"
            : configuration.iceServers.flatMap(\.urls).joined(separator: ", ")
        var lines = [
            "ECV reference service — backend \(configuration.backendVersion)"
                + (host.map { ", listening on \($0):\(baseURL?.port ?? 0)" } ?? ""),
            "  serviceUrl     \(base)",
            "    REST         \(base)\(ECVAPI.getRtcId), \(ECVAPI.dialEx), \(ECVAPI.hangup), \(ECVAPI.waitForRoomInterval)?rtcId=",
        ]
        if configuration.backendVersion == .v1_75 {
            lines.append("    queue info   \(base)\(ECVAPI.waitForRoomQueueInterval)?rtcId=, \(base)\(ECVAPI.queues)")
            lines.append("    queue socket \(ws)\(ECVAPI.queueSocket)?rtcId=<rtcId>")
        }
        lines += [
            "  webrtcUrl      \(base)   (AppRTC rooms: /join/<room>, /message/<room>/<client>, /leave/<room>/<client>)",
            "  signalingUrl   \(ws)\(ECVAPI.signalingSocket)",
            "  browser        \(base)/r/<rtcId>",
            "  agents         \(base)\(ECVAPI.agentLogin), \(ws)\(ECVAPI.agentSocket)?agentId="
                + (!configuration.agentSecrets.isEmpty ? "   (secret required)"
                    : configuration.openAgents ? "   (open: any agent may log in without a secret)" : "   (none admitted: no secret configured)"),
            "  callers        " + (configuration.issuesCallerTokens ? "caller tokens required after DialEx (docs/protocol.md §1.9)"
                : "OPEN: no caller tokens, anyone who knows an rtcId acts for its caller"),
            "  queues         \(queues.joined(separator: ", "))",
            "  ICE servers    \(ice)",
        ]
        if let pin = configuration.tls?.publicKeyPin {
            lines.append("  TLS pin        \(pin)   (clients pin it: ecv call/agent --pin \(pin))")
        }
        if let peer = configuration.peerServer { lines.append(peer.bannerLine(base: base, ws: ws)) }
        if host == "0.0.0.0" || host == "::" {
            lines.append("  (listening on every interface: other machines use this machine's address instead of \(baseURL?.host ?? "127.0.0.1"))")
        } else if host == "127.0.0.1" || host == "::1" || host == "localhost" {
            lines.append("  (listening on loopback only: other machines cannot reach it; pass --host 0.0.0.0 to serve them)")
        }
        return lines.joined(separator: "\n")
    }
}

extension ACDConfiguration {
    /// The queues with the default one listed, as the engine runs them.
    var validatedQueues: [String] {
        queues.contains(defaultQueue) ? queues : [defaultQueue] + queues
    }
}

/// Suspends until opened; opening before the wait makes the wait return at once.
final class CancellationGate: Sendable {
    private let state = Mutex<(opened: Bool, waiter: CheckedContinuation<Void, Never>?)>((false, nil))

    func wait() async {
        await withCheckedContinuation { continuation in
            let openAlready = state.withLock { state -> Bool in
                if state.opened { return true }
                state.waiter = continuation
                return false
            }
            if openAlready { continuation.resume() }
        }
    }

    func open() {
        let waiter = state.withLock { state in
            state.opened = true
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }
}
