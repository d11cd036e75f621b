import ECVProtocol
import Soup

/// Everything behind the endpoints: the ACD, the socket hubs, the timer, the script and the log.
/// The ACD's events are wired here, once: queue-socket pushes, agent events, room closing.
final class ServiceCore: Sendable {
    let configuration: ReferenceServiceConfiguration
    let engine: ACDEngine
    let log: ServiceEventLog
    let queueSockets: QueueSocketHub
    let agentSockets: AgentSocketHub
    let rooms: RoomHub
    let script: ServiceScript
    let timer: DeadlineTimer
    let callQuota: AddressQuota
    let presence: CallerPresence
    /// The identity-verification back office (docs/protocol.md §7).
    let verification: VerificationBackOffice
    /// DialEx answers by idempotency key, for retried dials.
    let dialReplay: DialReplay
    let peers: PeerServer?

    init(configuration: ReferenceServiceConfiguration) throws(ACDError) {
        if let problem = configuration.problem() { throw .invalidConfiguration(problem) }
        self.configuration = configuration
        let log = ServiceEventLog(capacity: configuration.logCapacity, handler: configuration.logHandler)
        let presence = CallerPresence(timeout: configuration.callerLossTimeout, clock: configuration.clock.acdClock)
        self.presence = presence
        verification = VerificationBackOffice(configuration: configuration.verification, clock: configuration.clock.acdClock)
        dialReplay = DialReplay(capacity: min(configuration.limits.maxLiveCalls, 10_000) * 2)
        peers = configuration.peerServer.map {
            PeerServer(configuration: $0, iceServers: configuration.iceServers, clock: configuration.clock, log: log)
        }
        let queueSockets = QueueSocketHub(log: log, presence: presence)
        let agentSockets = AgentSocketHub(log: log)
        let rooms = RoomHub(log: log, limits: configuration.limits, presence: presence)
        self.log = log
        self.queueSockets = queueSockets
        self.agentSockets = agentSockets
        self.rooms = rooms
        script = ServiceScript(log: log, queueSockets: queueSockets, agentSockets: agentSockets, rooms: rooms,
                               dialAuthenticator: configuration.dialAuthenticator)
        let clock = configuration.clock.acdClock
        callQuota = AddressQuota(limit: configuration.limits.maxCallRequestsPerAddressPerMinute, clock: clock)
        if case .manual = configuration.clock {
            timer = DeadlineTimer(clock: clock, isManual: true)
        } else {
            timer = DeadlineTimer(clock: clock, isManual: false)
        }
        engine = try ACDEngine(configuration: configuration.effectiveACD, clock: clock) { event in
            switch event {
            case .toCaller(let rtcId, let message):
                switch message {
                case .callEnded: presence.forget(rtcId)
                case .transferCompleted(_, let newRtcId):
                    presence.forget(rtcId)
                    presence.track(newRtcId)
                default: break
                }
                queueSockets.deliver(message, rtcId: rtcId)
            case .toAgent(let agentId, let event): agentSockets.deliver(event, agentId: agentId)
            case .roomClosed(let rtcId): rooms.closeRoom(rtcId, why: "its call ended or was transferred")
            }
        }
        timer.attach(engine)
        let engine = engine
        rooms.authorizeRegistrations { room, token in engine.roomAccess(rtcId: room, token: token) }
    }

    /// Runs an engine operation and re-arms the deadline timer after it.
    func withEngine<T, Failure: Error>(_ body: (ACDEngine) throws(Failure) -> T) throws(Failure) -> T {
        defer { timer.refresh() }
        return try body(engine)
    }

    var openSocketCount: Int {
        queueSockets.open.count + agentSockets.open.count + rooms.open.count + (peers?.open.count ?? 0)
    }
}
