import ECVProtocol

/// The caller's place in the queue, as the queue-info endpoint reports it.
///
/// `position` and `ewtSeconds` are nil when the service has no queue statistics and -1 when it
/// has nothing for this call right now; prefer `displayPosition` and `ewtMinutes`, which are nil
/// in both cases. -1 never means the call ended.
public struct QueueInfo: Sendable, Equatable {
    /// The raw wait state (`wait`, `not found`, `agent_connected`, …).
    public let state: String
    public let position: Int?
    public let ewtSeconds: Double?

    public init(state: String, position: Int?, ewtSeconds: Double?) {
        self.state = state
        self.position = position
        self.ewtSeconds = ewtSeconds
    }

    init(_ response: QueueInfoResponse) {
        self.init(state: response.state.rawValue, position: response.position, ewtSeconds: response.ewtSeconds)
    }

    /// `position` when it is a real position, else nil.
    public var displayPosition: Int? { QueueFigures.displayPosition(position) }

    /// `ewtSeconds` rounded up to whole minutes, nil when unknown.
    public var ewtMinutes: Int? { QueueFigures.minutes(ewtSeconds) }
}
