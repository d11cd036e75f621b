import ECVProtocol

/// How the reference ACD behaves. Times are in seconds on the engine's clock.
public struct ACDConfiguration: Sendable, Equatable {
    /// The named queues callers may dial into and agents may work.
    public var queues: [String]
    /// Where a DialEx without `queue` goes; always one of `queues` (added when missing).
    public var defaultQueue: String
    /// How long an offer rings before it is withdrawn, the agent set not ready, and the call re-routed.
    public var offerTimeout: Double
    /// Wrap-up time after each call before the agent is offered the next one.
    public var afterCallWork: Double
    /// How long a dialed call takes to reach the ACD (Genesys routing-point latency). Queue figures
    /// are -1 during it.
    public var queueEntryDelay: Double
    /// A queued call waiting longer than this ends with `QUEUE_TIMEOUT`; nil: it waits forever.
    public var maxQueueWait: Double?
    /// The handle time assumed for EWT while a queue has no completed calls; nil: EWT is -1 then.
    public var assumedHandleTime: Double?
    /// How many recent handle times per queue the average uses.
    public var handleTimeSamples: Int
    /// The priority a caller flagged `hearingImpaired` or `visuallyImpaired` gets at least.
    public var accessibilityPriority: Int
    /// How long an ended call's outcome stays answerable (polling gets `ended`/`transferred`
    /// instead of `not found`; Hangup stays idempotent).
    public var endedCallRetention: Double
    /// How long an rtcId from GetRtcId stays dialable.
    public var issuedRtcIdLifetime: Double
    /// Accept DialEx for rtcIds the service did not issue (apps that bring their own ids).
    public var acceptsUnissuedRtcIds: Bool
    /// False emulates a v1.5 backend: agents' transfer commands fail with TRANSFER_UNSUPPORTED.
    public var transfersEnabled: Bool
    /// Random ids for real use; sequential (`rtc-1`, `agent-1`, …) for tests and demos.
    public var identifiers: ACDIdentifierStyle
    /// DialEx issues a caller token and every later request about the call (Hangup, polling, the
    /// queue socket, the caller's room slot) must present it (docs/protocol.md §1.9). False only
    /// for an explicitly open lab service: then anyone who knows an rtcId acts for its caller.
    public var issuesCallerTokens: Bool
    /// Attached data (`attributes`) a DialEx gets for each key it lacks; the keys it has are kept as
    /// dialed. By default the seed's Danamon backward-compatibility defaults
    /// (`danamonAttributeDefaults`), so an app built before the four fields existed still shows an
    /// agent a complete call. `[:]` fills nothing (docs/protocol.md §1.3).
    public var attributeDefaults: [String: String]
    /// Per queue: the defaults for calls dialed into that queue, replacing `attributeDefaults`
    /// (`[:]` fills nothing for that queue). Every key must be one of `queues`.
    public var queueAttributeDefaults: [String: [String: String]]

    /// The seed's Danamon backward-compatibility defaults for a DialEx without them.
    public static let danamonAttributeDefaults: [String: String] = [
        "video_flow": "NTB", "video_channel": "Saving (1.0)", "video_application": "DBP 1.0", "video_language": "id",
    ]

    public init(queues: [String] = ["default"], defaultQueue: String = "default", offerTimeout: Double = 15,
                afterCallWork: Double = 0, queueEntryDelay: Double = 0, maxQueueWait: Double? = nil,
                assumedHandleTime: Double? = 120, handleTimeSamples: Int = 20, accessibilityPriority: Int = 10,
                endedCallRetention: Double = 60, issuedRtcIdLifetime: Double = 600,
                acceptsUnissuedRtcIds: Bool = false, transfersEnabled: Bool = true,
                identifiers: ACDIdentifierStyle = .random, issuesCallerTokens: Bool = true,
                attributeDefaults: [String: String] = ACDConfiguration.danamonAttributeDefaults,
                queueAttributeDefaults: [String: [String: String]] = [:]) {
        self.queues = queues
        self.defaultQueue = defaultQueue
        self.offerTimeout = offerTimeout
        self.afterCallWork = afterCallWork
        self.queueEntryDelay = queueEntryDelay
        self.maxQueueWait = maxQueueWait
        self.assumedHandleTime = assumedHandleTime
        self.handleTimeSamples = handleTimeSamples
        self.accessibilityPriority = accessibilityPriority
        self.endedCallRetention = endedCallRetention
        self.issuedRtcIdLifetime = issuedRtcIdLifetime
        self.acceptsUnissuedRtcIds = acceptsUnissuedRtcIds
        self.transfersEnabled = transfersEnabled
        self.identifiers = identifiers
        self.issuesCallerTokens = issuesCallerTokens
        self.attributeDefaults = attributeDefaults
        self.queueAttributeDefaults = queueAttributeDefaults
    }

    /// The attached-data defaults for a call dialed into `queue`.
    public func attributeDefaults(for queue: String) -> [String: String] {
        queueAttributeDefaults[queue] ?? attributeDefaults
    }

    /// Every defaults map the configuration holds (the service-wide one and each queue's).
    var allAttributeDefaults: [[String: String]] { [attributeDefaults] + queueAttributeDefaults.values }

    /// The configuration with the default queue listed, or an error naming the bad setting.
    public func validated() throws(ACDError) -> ACDConfiguration {
        func require(_ condition: Bool, _ message: String) throws(ACDError) {
            if !condition { throw .invalidConfiguration(message) }
        }
        try require(!defaultQueue.isEmpty, "defaultQueue must not be empty")
        try require(queues.allSatisfy { !$0.isEmpty }, "queue names must not be empty")
        try require(Set(queues).count == queues.count, "queue names must be unique")
        try require(offerTimeout > 0 && offerTimeout.isFinite, "offerTimeout must be > 0")
        try require(afterCallWork >= 0 && afterCallWork.isFinite, "afterCallWork must be >= 0")
        try require(queueEntryDelay >= 0 && queueEntryDelay.isFinite, "queueEntryDelay must be >= 0")
        try require(maxQueueWait.map { $0 > 0 && $0.isFinite } ?? true, "maxQueueWait must be > 0")
        try require(assumedHandleTime.map { $0 > 0 && $0.isFinite } ?? true, "assumedHandleTime must be > 0")
        try require(handleTimeSamples >= 1, "handleTimeSamples must be >= 1")
        try require(endedCallRetention >= 0 && endedCallRetention.isFinite, "endedCallRetention must be >= 0")
        try require(issuedRtcIdLifetime > 0 && issuedRtcIdLifetime.isFinite, "issuedRtcIdLifetime must be > 0")
        try require(allAttributeDefaults.allSatisfy { $0.keys.allSatisfy { !$0.isEmpty } },
                    "attribute default keys must not be empty")
        var copy = self
        if !copy.queues.contains(defaultQueue) { copy.queues.insert(defaultQueue, at: 0) }
        if let unknown = queueAttributeDefaults.keys.sorted().first(where: { !copy.queues.contains($0) }) {
            throw .invalidConfiguration("queueAttributeDefaults names \"\(unknown)\", which is not one of the queues")
        }
        return copy
    }
}

public enum ACDIdentifierStyle: Sendable, Equatable {
    /// Unguessable ids: an rtcId names a room anyone who knows it can join.
    case random
    /// `rtc-1`, `ix-1`, `agent-1`, `token-1`, …: deterministic for tests.
    case sequential
}
