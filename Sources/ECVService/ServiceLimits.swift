import ECVProtocol
import Synchronization

/// Every bound the reference service puts on what unauthenticated clients send (docs/protocol.md
/// §0.1). Each one refused gets a clear status: `400` naming the field, `413`, `414`, `431`, `429`
/// or `503`; sockets close with `1009` (too big).
public struct ServiceLimits: Sendable, Equatable {
    // HTTP (enforced by the server before a handler runs)

    /// Largest request body; a larger declared `Content-Length` is `413` before the body is read.
    public var maxRequestBodyBytes: Int = 64 << 10
    /// Largest request target (path and query): `414`.
    public var maxURLBytes: Int = 4 << 10
    /// Largest request header block (names and values): `431`.
    public var maxHeaderBytes: Int = 16 << 10
    /// How long a connection may take to deliver a request's headers once it is ready for one
    /// (a new connection, or a keep-alive one after its last answer): also the keep-alive idle
    /// time. Slow or stalled senders are cut off when it runs out.
    public var headerTimeout: Duration = .seconds(10)
    /// How long a request's body may take once its headers arrived.
    public var bodyTimeout: Duration = .seconds(15)
    /// Connections one client address may have waiting for their request headers at once (plain
    /// HTTP); one more is closed when accepted, unanswered. Each holds a descriptor: see
    /// docs/protocol.md §0.1 on the descriptor limit.
    public var maxWaitingConnectionsPerAddress: Int = 256

    // Fields

    /// `callerName` and agent names, in UTF-8 bytes; no control characters.
    public var maxNameBytes: Int = 256
    /// Entries in each of `attributes`, `acdAttributes`, `customPayload`.
    public var maxAttributeEntries: Int = 32
    /// Attribute keys, in UTF-8 bytes; no control characters.
    public var maxAttributeKeyBytes: Int = 64
    /// Attribute values, in UTF-8 bytes; no control characters but tab, CR and LF.
    public var maxAttributeValueBytes: Int = 1024
    /// An agent-login secret, in bytes.
    public var maxSecretBytes: Int = 256

    // State

    /// Payloads a room keeps for clients that have not joined or registered yet (all clients
    /// together); one more is refused with `ERROR`.
    public var maxMessagesPerRoom: Int = 256
    /// The same payloads in bytes (their SDP or candidate text): one more past it is refused with
    /// `ERROR`. An offer with its candidates takes some 10 KiB.
    public var maxMessageBytesPerRoom: Int = 512 << 10
    /// The same for all rooms together, so many calls cannot add up what one may not.
    public var maxRoomMessageBytes: Int = 64 << 20
    /// Calls alive at once (dialed, not ended): `503 SERVICE_UNAVAILABLE` beyond.
    public var maxLiveCalls: Int = 10_000
    /// rtcIds issued but not dialed yet: `503` beyond (they expire after `issuedRtcIdLifetime`).
    public var maxIssuedRtcIds: Int = 20_000
    /// GetRtcId and DialEx requests one client address may make per minute: `429` beyond.
    public var maxCallRequestsPerAddressPerMinute: Int = 600
    /// Agents logged in at once: `503` beyond.
    public var maxAgents: Int = 2_000

    // WebSocket frames (incoming, per socket kind; larger ones close the socket with 1009)

    /// The queue socket: the client sends nothing.
    public var queueSocketFrameBytes: Int = 4 << 10
    /// Agent commands.
    public var agentSocketFrameBytes: Int = 64 << 10
    /// Collider commands (an SDP offer with its candidates fits easily).
    public var colliderFrameBytes: Int = 256 << 10
    /// What an agent client accepts (`WebSocketClient.Options.maxIncomingPayloadSize`, 4 MiB in
    /// the agent bot): DialEx field limits must keep every offer frame below it.
    public var agentClientFrameBytes: Int = 4 << 20

    // WebSocket sending

    /// What each WebSocket may hold that its client has not read (beyond the kernel's send
    /// buffer): a send past it closes the socket with 1008, logged. At least the largest frame the
    /// service sends: a worst-case agent offer, a collider frame relayed with every byte escaped.
    public var maxOutgoingWebSocketBytes: Int = 4 << 20
    /// What each WebSocket's client may have sent that the service has not processed yet (the
    /// service reads as fast as a client sends): a message past it drops the connection, logged
    /// ("incoming backlog"). At least the largest frame any socket kind accepts.
    public var maxUnreadIncomingWebSocketBytes: Int = 4 << 20

    public init() {}

    /// The largest `offer` frame the field limits allow: every field at its limit, every
    /// character escaped by JSON (`\u00XX`, six bytes per byte), plus the envelope.
    var worstCaseOfferFrameBytes: Int {
        let escaped = 6
        let map = maxAttributeEntries * (maxAttributeKeyBytes + maxAttributeValueBytes + 6) * escaped
        return maxNameBytes * escaped + 3 * map + 4096
    }

    func problem() -> String? {
        let positive: [(String, Int)] = [
            ("maxRequestBodyBytes", maxRequestBodyBytes), ("maxURLBytes", maxURLBytes), ("maxHeaderBytes", maxHeaderBytes),
            ("maxWaitingConnectionsPerAddress", maxWaitingConnectionsPerAddress),
            ("maxNameBytes", maxNameBytes), ("maxAttributeEntries", maxAttributeEntries),
            ("maxAttributeKeyBytes", maxAttributeKeyBytes), ("maxAttributeValueBytes", maxAttributeValueBytes),
            ("maxSecretBytes", maxSecretBytes), ("maxMessagesPerRoom", maxMessagesPerRoom),
            ("maxMessageBytesPerRoom", maxMessageBytesPerRoom), ("maxRoomMessageBytes", maxRoomMessageBytes), ("maxLiveCalls", maxLiveCalls),
            ("maxIssuedRtcIds", maxIssuedRtcIds), ("maxCallRequestsPerAddressPerMinute", maxCallRequestsPerAddressPerMinute),
            ("maxAgents", maxAgents), ("queueSocketFrameBytes", queueSocketFrameBytes),
            ("agentSocketFrameBytes", agentSocketFrameBytes), ("colliderFrameBytes", colliderFrameBytes),
            ("agentClientFrameBytes", agentClientFrameBytes), ("maxOutgoingWebSocketBytes", maxOutgoingWebSocketBytes),
            ("maxUnreadIncomingWebSocketBytes", maxUnreadIncomingWebSocketBytes),
        ]
        if let (name, _) = positive.first(where: { $0.1 < 1 }) { return "limits.\(name) must be at least 1" }
        if headerTimeout <= .zero || bodyTimeout <= .zero { return "limits.headerTimeout and bodyTimeout must be positive" }
        // The server answers 431/414 for header blocks that do not end within these plus 1 KiB;
        // libsoup 3.2 drops a header block past 64 KiB without an answer.
        if maxURLBytes + maxHeaderBytes > 62 << 10 {
            return "limits.maxURLBytes + maxHeaderBytes must stay under 62 KiB (libsoup drops header blocks past 64 KiB)"
        }
        let largestSentFrame = max(worstCaseOfferFrameBytes, 6 * colliderFrameBytes + 1024)
        if largestSentFrame > maxOutgoingWebSocketBytes {
            return "limits.maxOutgoingWebSocketBytes (\(maxOutgoingWebSocketBytes)) must hold the largest frame the service sends "
                + "(\(largestSentFrame) bytes with these field and frame limits)"
        }
        if maxUnreadIncomingWebSocketBytes < max(queueSocketFrameBytes, agentSocketFrameBytes, colliderFrameBytes) {
            return "limits.maxUnreadIncomingWebSocketBytes must hold the largest frame a socket accepts"
        }
        if worstCaseOfferFrameBytes > agentClientFrameBytes {
            return "the DialEx field limits allow offer frames of \(worstCaseOfferFrameBytes) bytes, more than "
                + "limits.agentClientFrameBytes (\(agentClientFrameBytes)): lower the field limits"
        }
        return nil
    }

    // MARK: Field checks

    /// Why a DialEx body is out of bounds (a `400` naming the field), or nil.
    func problem(in dial: DialExRequest) -> ProtocolError? {
        if let problem = nameProblem(dial.callerName, field: "callerName") { return problem }
        for (field, map) in [("attributes", dial.attributes), ("acdAttributes", dial.acdAttributes),
                             ("customPayload", dial.customPayload)] {
            if map.count > maxAttributeEntries {
                return .invalidValue(field: field, reason: "has \(map.count) entries; the limit is \(maxAttributeEntries)")
            }
            for (key, value) in map.sorted(by: { $0.key < $1.key }) {
                if key.utf8.count > maxAttributeKeyBytes || key.isEmpty || key.unicodeScalars.contains(where: Self.isControl) {
                    return .invalidValue(field: field, reason: "a key is empty, longer than \(maxAttributeKeyBytes) bytes "
                        + "or holds control characters")
                }
                if value.utf8.count > maxAttributeValueBytes {
                    return .invalidValue(field: "\(field).\(key)", reason: "is \(value.utf8.count) bytes; the limit is \(maxAttributeValueBytes)")
                }
                if value.unicodeScalars.contains(where: { Self.isControl($0) && !["\t", "\n", "\r"].contains($0) }) {
                    return .invalidValue(field: "\(field).\(key)", reason: "holds control characters")
                }
            }
        }
        if let queue = dial.queue, queue.utf8.count > maxNameBytes {
            return .invalidValue(field: "queue", reason: "is longer than \(maxNameBytes) bytes")
        }
        return nil
    }

    /// Why a caller or agent name is out of bounds, or nil.
    func nameProblem(_ name: String, field: String) -> ProtocolError? {
        Self.lineTextProblem(name, maxBytes: maxNameBytes).map { .invalidValue(field: field, reason: $0) }
    }

    /// The `callerName` rules, shared by every one-line text a client sends (names, the back
    /// office's session fields): at most `maxBytes` UTF-8 bytes (so one "character" of 40 kB of
    /// combining marks is as long as it looks to memory), and no control, line-separator or bidi
    /// formatting character. Why `text` breaks them, or nil.
    static func lineTextProblem(_ text: String, maxBytes: Int) -> String? {
        if text.utf8.count > maxBytes { return "is \(text.utf8.count) bytes; the limit is \(maxBytes)" }
        if text.unicodeScalars.contains(where: isControl) { return "holds control, line-separator or bidi formatting characters" }
        return nil
    }

    /// C0/C1 controls, line and paragraph separators, and the bidi embeddings, overrides and
    /// isolates (and their marks) that make a text read differently from what it holds.
    static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.properties.generalCategory == .control || (0x2028...0x202E).contains(scalar.value)
            || (0x2066...0x2069).contains(scalar.value) || [0x200E, 0x200F, 0x061C].contains(scalar.value)
    }
}

/// Fixed one-minute windows of call requests per client address (`maxCallRequestsPerAddressPerMinute`).
final class AddressQuota: Sendable {
    private struct State {
        var windowStart: Double = 0
        var counts: [String: Int] = [:]
    }
    private let state = Mutex(State())
    private let limit: Int
    private let clock: any ACDClock

    init(limit: Int, clock: any ACDClock) {
        self.limit = limit
        self.clock = clock
    }

    /// Counts one request from `address`; false when the address is over its limit this minute.
    func admit(_ address: String?) -> Bool {
        let now = clock.now()
        return state.withLock { state in
            if now - state.windowStart >= 60 || now < state.windowStart {
                state.windowStart = now
                state.counts.removeAll(keepingCapacity: true)
            }
            let key = address ?? "?"
            let count = state.counts[key, default: 0]
            guard count < limit else { return false }
            state.counts[key] = count + 1
            return true
        }
    }
}
