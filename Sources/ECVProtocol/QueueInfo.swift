import Foundation

/// The call state both polling endpoints answer (docs/protocol.md §1.5).
public enum WaitState: String, WireEnum {
    /// Dialed and not yet answered: entering the ACD, queued, or ringing at an agent.
    case wait
    /// The service has no call with this rtcId (never dialed, or forgotten after the call ended).
    case notFound = "not found"
    /// An agent accepted; the caller joins the room.
    case agentConnected = "agent_connected"
    /// Connected, and the agent started a transfer that has not completed or been cancelled yet.
    case transferPending = "transfer_pending"
    /// The call moved to a new interaction; `newRtcId` names it. Terminal for this rtcId.
    case transferred
    /// The call is over; `reason` says why. Terminal.
    case ended
}

/// The answer of `GET /api/WaitForRoomInterval?rtcId=` (legacy, no queue figures) and of
/// `GET /api/WaitForRoomQueueInterval?rtcId=` (with queue figures).
///
/// Queue figures follow the seed's rules: an absent field (nil) means the service has no queue
/// statistics at all; `-1` means the statistics source has nothing for this interaction right now
/// (before it reaches the ACD, once it is ringing or connected, after it ended). `-1` is never an
/// end of call: only `state` says that.
public struct QueueInfoResponse: Codable, Sendable, Equatable {
    public var rtcId: String
    public var state: WaitState
    /// 1-based position in the queue, or -1, or nil.
    public var position: Int?
    /// Estimated wait time in seconds, or -1, or nil.
    public var ewtSeconds: Double?
    /// Present when `state` is `ended`.
    public var reason: CallEndReason?
    /// Present (and required) when `state` is `transferred`.
    public var newRtcId: String?

    public init(rtcId: String, state: WaitState, position: Int? = nil, ewtSeconds: Double? = nil,
                reason: CallEndReason? = nil, newRtcId: String? = nil) {
        self.rtcId = rtcId
        self.state = state
        self.position = position
        self.ewtSeconds = ewtSeconds
        self.reason = reason
        self.newRtcId = newRtcId
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        rtcId = try container.decodeNonEmptyString(forKey: .rtcId)
        state = try container.decode(WaitState.self, forKey: .state)
        position = try container.decodeIfPresent(Int.self, forKey: .position)
        ewtSeconds = try container.decodeIfPresent(Double.self, forKey: .ewtSeconds)
        reason = try container.decodeIfPresent(CallEndReason.self, forKey: .reason)
        newRtcId = try container.decodeIfPresent(String.self, forKey: .newRtcId)
        if state == .transferred, newRtcId == nil {
            throw DecodingError.keyNotFound(
                CodingKeys.newRtcId,
                .init(codingPath: container.codingPath, debugDescription: "state \"transferred\" needs newRtcId"))
        }
    }

    /// The same answer without queue figures, as the legacy endpoint (and a service without queue
    /// statistics) sends it.
    public var withoutQueueFigures: QueueInfoResponse {
        var copy = self
        copy.position = nil
        copy.ewtSeconds = nil
        return copy
    }

    /// `position` when it is a real position, else nil (so UI code needs no -1 handling).
    public var displayPosition: Int? { QueueFigures.displayPosition(position) }

    /// `ewtSeconds` rounded up to whole minutes, nil when unknown.
    public var ewtMinutes: Int? { QueueFigures.minutes(ewtSeconds) }
}

/// The seed's rules for showing queue figures: -1 and nil both mean "nothing to show".
public enum QueueFigures {
    /// A position to display: a real (positive) one, else nil.
    public static func displayPosition(_ position: Int?) -> Int? {
        guard let position, position > 0 else { return nil }
        return position
    }

    /// The longest estimate shown (a week): the service's figure is outside input, and one past
    /// this says nothing a caller can use (and past `Int`'s range it could not be converted).
    public static let longestShownWaitSeconds: Double = 7 * 24 * 3600

    /// An estimated wait in whole minutes, rounded up; nil when unknown, -1, or beyond
    /// `longestShownWaitSeconds`.
    public static func minutes(_ ewtSeconds: Double?) -> Int? {
        guard let ewtSeconds, ewtSeconds >= 0, ewtSeconds <= longestShownWaitSeconds else { return nil }
        return Int((ewtSeconds / 60).rounded(.up))
    }
}
