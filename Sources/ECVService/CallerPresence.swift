import ECVProtocol
import GLibCore
import Synchronization

/// Whether each dialed call's caller is still there (docs/protocol.md §1.7, "A vanished caller").
///
/// A caller is present while it holds a socket for the call (its queue socket, or its collider
/// socket in the call's room) and for `timeout` after DialEx, after each poll and after its last
/// socket closed. A sweep once a second ends calls whose caller has been absent longer with
/// `CALLER_LOST`, so a killed caller never leaves its agent busy.
final class CallerPresence: Sendable {
    private struct Presence {
        var sockets = 0
        var lastSeen: Double
    }

    private let state = Mutex<[String: Presence]>([:])
    private let timeout: Double
    private let clock: any ACDClock
    private let sweeper = Mutex<MainLoop.Timer?>(nil)

    init(timeout: Duration, clock: any ACDClock) {
        self.timeout = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
        self.clock = clock
    }

    /// A call was dialed (or a transfer gave its caller a new leg).
    func track(_ rtcId: String) {
        let now = clock.now()
        state.withLock { $0[rtcId] = $0[rtcId] ?? Presence(lastSeen: now) }
    }

    func forget(_ rtcId: String) { _ = state.withLock { $0.removeValue(forKey: rtcId) } }

    /// A poll from the caller.
    func seen(_ rtcId: String) {
        let now = clock.now()
        state.withLock { $0[rtcId]?.lastSeen = now }
    }

    func socketOpened(_ rtcId: String) {
        state.withLock { $0[rtcId]?.sockets += 1 }
    }

    func socketClosed(_ rtcId: String) {
        let now = clock.now()
        state.withLock { map in
            guard var presence = map[rtcId] else { return }
            presence.sockets = max(0, presence.sockets - 1)
            presence.lastSeen = now
            map[rtcId] = presence
        }
    }

    /// The calls whose caller has been absent longer than the timeout; they are forgotten.
    func vanished() -> [String] {
        let now = clock.now()
        return state.withLock { map in
            let gone = map.filter { $0.value.sockets == 0 && now - $0.value.lastSeen > timeout }.map(\.key)
            for rtcId in gone { map[rtcId] = nil }
            return gone.sorted()
        }
    }

    /// Sweeps once a second on the main loop until `stop()`, ending vanished callers' calls.
    func start(_ endCall: @escaping @Sendable (String) -> Void) {
        let timer = MainLoop.shared.schedule(every: .seconds(1)) { [weak self] in
            guard let self else { return false }
            for rtcId in self.vanished() { endCall(rtcId) }
            return true
        }
        sweeper.withLock { $0 = timer }
    }

    func stop() {
        sweeper.withLock { timer in
            timer?.cancel()
            timer = nil
        }
    }
}
