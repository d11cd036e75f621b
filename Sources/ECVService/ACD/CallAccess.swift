import ECVProtocol

/// Who a credential speaks for in one call (docs/protocol.md §1.9).
public enum CallParty: Sendable, Hashable, CustomStringConvertible {
    /// The caller: the token DialEx issued.
    case caller
    /// The agent the call is offered to, connected to, or being transferred to: its session token.
    case agent(String)

    public var description: String {
        switch self {
        case .caller: "caller"
        case .agent(let agentId): "agent \(agentId)"
        }
    }
}

/// What the service makes of the credential a request about a call presented.
public enum CallAccess: Sendable, Equatable {
    /// The service issues no caller tokens (`issuesCallerTokens` off): anyone acts for anyone.
    case open
    case granted(CallParty)
    /// No credential: `401 UNAUTHORIZED`.
    case missingCredential
    /// A credential that is not this call's (or not of the party asked for): `403 FORBIDDEN`.
    case denied
    /// The service does not know the call; the endpoint answers as it does for unknown calls.
    case unknownCall
    /// The rtcId was issued but not dialed: it has no caller token yet. Reads (polling, the queue
    /// socket) answer as for an unknown call; Hangup is refused, so nobody can discard the id.
    case notDialed

    /// The party the request may act as; nil when it may not act at all (or the service is open).
    public var party: CallParty? {
        if case .granted(let party) = self { return party }
        return nil
    }

    /// Whether the request may act for the caller.
    public var allowsCaller: Bool { self == .open || self == .granted(.caller) }

    /// Whether a read about the caller's call may proceed (the read then tells an unknown or
    /// undialed call apart from nothing).
    public var allowsCallerRead: Bool { allowsCaller || self == .unknownCall || self == .notDialed }
}

extension ACDState {
    /// Access of `token` to the caller side of `rtcId` (Hangup, polling, the queue socket). An
    /// rtcId issued but not dialed yet has no caller token, so nobody may act on it but DialEx.
    func callerAccess(rtcId: String, token: String?) -> CallAccess {
        guard configuration.issuesCallerTokens else { return .open }
        let expected: String?
        if let record = interactions[rtcId] {
            expected = record.callerToken
        } else if let record = ended[rtcId] {
            expected = record.callerToken
        } else if issued[rtcId] != nil {
            return .notDialed
        } else {
            return .unknownCall
        }
        guard let token, !token.isEmpty else { return .missingCredential }
        guard let expected, constantTimeEquals(token, expected) else { return .denied }
        return .granted(.caller)
    }

    /// Access of `token` to the room of `rtcId`: the caller's token takes the caller's slot, the
    /// session token of the agent the call is offered or connected to (or, for a transfer's new
    /// leg, of the target agent) takes the agent's slot.
    func roomAccess(rtcId: String, token: String?) -> CallAccess {
        guard configuration.issuesCallerTokens else { return .open }
        let record: InteractionRecord
        let agentId: String?
        if let live = interactions[rtcId] {
            record = live
            switch live.phase {
            case .offered(let id, _), .connected(let id, _): agentId = id
            case .entering, .queued: agentId = nil
            }
        } else if let transferred = transferLegs[rtcId], let live = interactions[transferred] {
            record = live
            agentId = live.transfer?.targetAgentId
        } else {
            return .unknownCall
        }
        guard let token, !token.isEmpty else { return .missingCredential }
        if let expected = record.callerToken, constantTimeEquals(token, expected) { return .granted(.caller) }
        if let agentId, let owner = agentIdsByToken[token], owner == agentId { return .granted(.agent(agentId)) }
        return .denied
    }
}

/// Compares secrets without an early exit, so timing does not reveal how much of a guess matched.
/// The length difference is kept at full width: truncated to a byte, a guess 256 NUL bytes longer
/// than the secret would match.
func constantTimeEquals(_ lhs: String, _ rhs: String) -> Bool {
    let a = Array(lhs.utf8), b = Array(rhs.utf8)
    var difference = UInt(bitPattern: a.count ^ b.count)
    for index in 0..<max(a.count, b.count) {
        difference |= UInt((index < a.count ? a[index] : 0) ^ (index < b.count ? b[index] : 0))
    }
    return difference == 0
}

/// Whether `candidate` is one of `secrets`, comparing with every one of them in constant time.
func constantTimeContains(_ secrets: some Sequence<String>, _ candidate: String) -> Bool {
    secrets.reduce(UInt8(0)) { $0 | (constantTimeEquals($1, candidate) ? 1 : 0) } != 0
}
