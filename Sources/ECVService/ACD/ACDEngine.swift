import ECVProtocol
import Synchronization

/// The reference service's ACD: queues, agents, routing, offers, transfers, queue figures.
///
/// A single-owner state machine behind a `Mutex`, not an actor: the service calls it from libsoup
/// handlers on the GLib main loop, which must answer synchronously and in arrival order; an actor
/// would force an async hop per request and let concurrent requests reorder. The engine does no
/// I/O and never suspends, so a lock held for a few microseconds is all it needs, and tests drive
/// it without `await`.
///
/// Time comes from the injected clock. Every call first fires whatever fell due (offer timeouts,
/// wrap-up ends, queue entry, forgetting ended calls) at its own time, so results do not depend on
/// how late anyone looks; the server additionally calls `tick()` at `nextDeadline`.
///
/// Events go to `onEvent` in exactly the order the state changed, never while a lock is held, so
/// the handler may call back into the engine (its events are then delivered after the current
/// ones, possibly by the thread already delivering).
public final class ACDEngine: Sendable {
    private let state: Mutex<ACDState>
    private let delivery = Mutex(Delivery())
    private let clock: any ACDClock
    private let onEvent: @Sendable (ACDEvent) -> Void

    private struct Delivery {
        var pending: [Delivered] = []
        var draining = false
    }

    /// What waits in the delivery queue: an event for `onEvent`, or a caller's continuation that
    /// must run exactly between the events emitted before and after it (socket greetings, acks).
    private enum Delivered: Sendable {
        case event(ACDEvent)
        case action(@Sendable () -> Void)
    }

    public init(configuration: ACDConfiguration = ACDConfiguration(), clock: any ACDClock = SystemACDClock(),
                onEvent: @escaping @Sendable (ACDEvent) -> Void) throws(ACDError) {
        let validated = try configuration.validated()
        self.state = Mutex(ACDState(configuration: validated, now: clock.now()))
        self.clock = clock
        self.onEvent = onEvent
    }

    // MARK: Caller side

    /// `POST /api/GetRtcId`: a new rtcId, dialable for `issuedRtcIdLifetime`.
    public func issueRtcId() -> String {
        mutate { state in state.issueRtcId() }
    }

    /// `POST /api/DialEx`.
    public func dial(_ request: DialExRequest) throws(ACDError) -> DialExResponse {
        try mutateThrowing { state throws(ACDError) in try state.dial(request) }
    }

    /// `POST /api/Hangup`: the caller ends the call in any phase (idempotent once ended).
    public func hangUp(rtcId: String) throws(ACDError) {
        try mutateThrowing { state throws(ACDError) in try state.callerHangUp(rtcId: rtcId) }
    }

    /// The caller's accessibility flags changed (EnQualify's `setHandicappedStatus`): the call's
    /// priority is derived again and, while it waits, its place in the queue with it. Returns the
    /// new priority.
    @discardableResult
    public func setAccessibility(rtcId: String, hearingImpaired: Bool, visuallyImpaired: Bool) throws(ACDError) -> Int {
        try mutateThrowing { state throws(ACDError) in
            try state.setAccessibility(rtcId: rtcId, hearingImpaired: hearingImpaired, visuallyImpaired: visuallyImpaired)
        }
    }

    /// The caller vanished: the call ends with `CALLER_LOST` (no-op once it ended).
    public func callerLost(rtcId: String) {
        mutate { state in state.callerLost(rtcId: rtcId) }
    }

    /// The answer to both polling endpoints (the legacy one drops the queue figures).
    public func queueInfo(rtcId: String) -> QueueInfoResponse {
        mutate { state in state.queueInfo(rtcId: rtcId) }
    }

    /// What a queue socket for `rtcId` is sent when it opens. A terminal last message means: send,
    /// then close with 1000 (or 4404 after `error`).
    public func queueSocketGreeting(rtcId: String) -> [QueueSocketMessage] {
        mutate { state in state.queueSocketGreeting(rtcId: rtcId) }
    }

    /// Whether `token` may act for the caller of `rtcId` (docs/protocol.md §1.9).
    public func callerAccess(rtcId: String, token: String?) -> CallAccess {
        mutate { state in state.callerAccess(rtcId: rtcId, token: token) }
    }

    /// Which slot of the room `rtcId` the credential `token` may take (docs/protocol.md §1.9).
    public func roomAccess(rtcId: String, token: String?) -> CallAccess {
        mutate { state in state.roomAccess(rtcId: rtcId, token: token) }
    }

    // MARK: Agent side

    /// `POST /agent/api/Login`. The agent starts not ready, on no queue.
    /// - Parameter servesAccessibility: the agent is offered callers flagged hearing or visually
    ///   impaired before other free agents are.
    public func login(name: String, servesAccessibility: Bool = false) throws(ACDError) -> AgentLoginResponse {
        try mutateThrowing { state throws(ACDError) in try state.login(name: name, servesAccessibility: servesAccessibility) }
    }

    public func agentId(forToken token: String) -> String? {
        state.withLock { $0.agentIdsByToken[token] }
    }

    /// Whether `agentId` is logged in.
    public func hasAgent(_ agentId: String) -> Bool {
        state.withLock { $0.agents[agentId] != nil }
    }

    /// Logout, or the agent socket closed: the agent and its token are forgotten.
    public func removeAgent(_ agentId: String) throws(ACDError) {
        try mutateThrowing { state throws(ACDError) in try state.removeAgent(agentId) }
    }

    public func perform(_ command: AgentCommand, agentId: String) throws(ACDError) {
        try mutateThrowing { state throws(ACDError) in try state.perform(command, agentId: agentId) }
    }

    /// Runs an agent-socket request and returns the answer to send back on that socket: `ack` when
    /// the request had a `requestId`, `error` on failure, nil otherwise.
    public func handle(_ request: AgentRequest, from agentId: String) -> AgentEvent? {
        do {
            try perform(request.command, agentId: agentId)
            return request.requestId.map { .ack(requestId: $0) }
        } catch {
            return .error(requestId: request.requestId, code: error.code, message: error.description)
        }
    }

    /// The `agent_state` an agent socket is sent when it opens.
    public func agentGreeting(agentId: String) throws(ACDError) -> AgentEvent {
        try mutateThrowing { state throws(ACDError) in try state.agentGreeting(agentId: agentId) }
    }

    // MARK: In event order (for servers)

    // A greeting read with `queueSocketGreeting` may already include a transition whose event
    // another thread is still about to deliver, so a socket registered after reading it could see
    // that transition twice (or, registered before, miss it). These variants hand their result
    // to a closure that runs in the event stream itself: after every event emitted before the
    // state was read, before every event emitted after it. Registering the socket inside that
    // closure gives it each transition exactly once, as part of the greeting or as a push.

    /// Calls `action` in event order: after every event emitted so far has been delivered.
    public func afterPendingEvents(_ action: @escaping @Sendable () -> Void) {
        let always: (Bool) -> (@Sendable () -> Void)? = { _ in action }
        mutate(then: always) { _ in true }
    }

    /// Reads the queue-socket greeting of `rtcId` and calls `attach` with it in event order.
    public func attachQueueSocket(rtcId: String, _ attach: @escaping @Sendable ([QueueSocketMessage]) -> Void) {
        let attachAfter: ([QueueSocketMessage]) -> (@Sendable () -> Void)? = { greeting in { attach(greeting) } }
        mutate(then: attachAfter) { state in state.queueSocketGreeting(rtcId: rtcId) }
    }

    /// Reads the agent's `agent_state` greeting (or why there is none) and calls `attach` with it
    /// in event order.
    public func attachAgentSocket(agentId: String,
                                  _ attach: @escaping @Sendable (Result<AgentEvent, ACDError>) -> Void) {
        let attachAfter: (Result<AgentEvent, ACDError>) -> (@Sendable () -> Void)? = { greeting in { attach(greeting) } }
        mutate(then: attachAfter) { state -> Result<AgentEvent, ACDError> in
            do throws(ACDError) {
                return .success(try state.agentGreeting(agentId: agentId))
            } catch {
                return .failure(error)
            }
        }
    }

    /// Runs an agent-socket request and calls `reply` in event order, just before the events the
    /// request caused: with `ack` when it succeeded and had a `requestId`, with `error` when it
    /// failed; not at all for a silent success.
    public func handle(_ request: AgentRequest, from agentId: String,
                       replyInOrder reply: @escaping @Sendable (AgentEvent) -> Void) {
        let answerFirst: (AgentEvent?) -> (@Sendable () -> Void)? = { answer in
            guard let answer else { return nil }
            return { reply(answer) }
        }
        mutate(first: answerFirst) { state -> AgentEvent? in
            do throws(ACDError) {
                try state.perform(request.command, agentId: agentId)
                return request.requestId.map { AgentEvent.ack(requestId: $0) }
            } catch {
                return AgentEvent.error(requestId: request.requestId, code: error.code, message: error.description)
            }
        }
    }

    // MARK: Time, introspection, control

    /// Fires everything that fell due.
    public func tick() {
        mutate { _ in }
    }

    /// When the next timed transition is due on the engine's clock; nil when nothing is scheduled.
    public var nextDeadline: Double? {
        state.withLock { $0.nextDeadline()?.time }
    }

    /// How much the engine holds, cheaply (for the service's limits).
    public var population: (liveCalls: Int, issuedRtcIds: Int, agents: Int) {
        state.withLock { ($0.interactions.count, $0.issued.count, $0.agents.count) }
    }

    public func snapshot() -> ACDSnapshot {
        mutate { state in state.snapshot() }
    }

    /// `GET /api/Queues`.
    public func queueSummaries() -> QueuesResponse {
        mutate { state in state.queueSummaries() }
    }

    public var configuration: ACDConfiguration {
        state.withLock { $0.configuration }
    }

    /// Changes settings at run time (scripted scenarios: longer entry delay, shorter offer timeout,
    /// transfers off…). Running timers keep their deadlines; queues still in use cannot be removed;
    /// the identifier style is fixed at creation.
    public func reconfigure(_ change: (inout ACDConfiguration) -> Void) throws(ACDError) {
        try mutateThrowing { state throws(ACDError) in
            var proposed = state.configuration
            change(&proposed)
            proposed.identifiers = state.configuration.identifiers
            let validated = try proposed.validated()
            let inUse = Set(state.interactions.values.map(\.queue))
                .union(state.agents.values.flatMap(\.queues))
            if let removed = inUse.subtracting(validated.queues).sorted().first {
                throw .invalidConfiguration("queue \"\(removed)\" is in use and cannot be removed")
            }
            state.configuration = validated
            state.rebuildIndex() // the queue timeout of every queued call may have changed
            state.route()
        }
    }

    /// Ends every call with SERVICE_SHUTDOWN and refuses new dials.
    public func shutDown() {
        mutate { state in state.shutDown() }
    }

    // MARK: Plumbing

    private func mutate<T: Sendable>(_ body: (inout ACDState) -> T) -> T {
        mutate(first: { _ in nil }, then: { _ in nil }, body)
    }

    /// `mutate`, also queueing an action derived from the result in the delivery queue: `first`
    /// goes before the operation's own events, `then` after them.
    @discardableResult
    private func mutate<T: Sendable>(first: (T) -> (@Sendable () -> Void)? = { _ in nil },
                                     then: (T) -> (@Sendable () -> Void)? = { _ in nil },
                                     _ body: (inout ACDState) -> T) -> T {
        let now = clock.now()
        let result = state.withLock { state in
            // Time-driven events that fall due now belong before the operation's answer.
            state.advance(to: now)
            enqueue(&state)
            let result = body(&state)
            enqueue(&state, before: first(result), after: then(result))
            return result
        }
        drain()
        return result
    }

    private func mutateThrowing<T: Sendable>(_ body: (inout ACDState) throws(ACDError) -> T) throws(ACDError) -> T {
        let now = clock.now()
        let result: Result<T, ACDError> = state.withLock { state in
            state.advance(to: now)
            let result: Result<T, ACDError>
            do throws(ACDError) {
                result = .success(try body(&state))
            } catch {
                result = .failure(error)
            }
            enqueue(&state)
            return result
        }
        drain()
        return try result.get()
    }

    /// Moves the operation's events to the delivery queue while the state lock is still held, so
    /// delivery order is state order even across threads.
    private func enqueue(_ state: inout ACDState, before: (@Sendable () -> Void)? = nil,
                         after: (@Sendable () -> Void)? = nil) {
        guard !state.outbox.isEmpty || before != nil || after != nil else { return }
        var items: [Delivered] = []
        if let before { items.append(.action(before)) }
        items += state.outbox.map(Delivered.event)
        if let after { items.append(.action(after)) }
        state.outbox.removeAll()
        delivery.withLock { $0.pending.append(contentsOf: items) }
    }

    /// Delivers queued events outside every lock. Whoever finds nobody delivering becomes the
    /// deliverer until the queue is empty.
    private func drain() {
        let claimed = delivery.withLock { delivery -> Bool in
            guard !delivery.draining, !delivery.pending.isEmpty else { return false }
            delivery.draining = true
            return true
        }
        guard claimed else { return }
        while true {
            let batch = delivery.withLock { delivery -> [Delivered] in
                let batch = delivery.pending
                delivery.pending.removeAll()
                if batch.isEmpty { delivery.draining = false }
                return batch
            }
            if batch.isEmpty { return }
            for item in batch {
                switch item {
                case .event(let event): onEvent(event)
                case .action(let action): action()
                }
            }
        }
    }
}
