import ECVProtocol
import Foundation

extension ACDState {
    mutating func issueRtcId() -> String {
        let rtcId = freshRtcId()
        issued[rtcId] = now + configuration.issuedRtcIdLifetime
        return rtcId
    }

    func isKnown(_ rtcId: String) -> Bool {
        issued[rtcId] != nil || interactions[rtcId] != nil || ended[rtcId] != nil || transferLegs[rtcId] != nil
    }

    mutating func dial(_ request: DialExRequest) throws(ACDError) -> DialExResponse {
        guard !isShutDown else { throw .shuttingDown }
        let rtcId = request.rtcId
        guard ECVAPI.isValidRtcId(rtcId) else {
            throw .invalidField(field: "rtcId", reason: "must be 1-128 characters of [A-Za-z0-9._~-]")
        }
        guard !request.callerName.trimmingCharacters(in: .whitespaces).isEmpty else {
            throw .invalidField(field: "callerName", reason: "must not be empty")
        }
        if interactions[rtcId] != nil || ended[rtcId] != nil || transferLegs[rtcId] != nil {
            throw .alreadyDialed(rtcId)
        }
        if issued[rtcId] == nil, !configuration.acceptsUnissuedRtcIds { throw .unknownRtcId(rtcId) }
        let queue = request.queue ?? configuration.defaultQueue
        try requireQueue(queue, field: "queue")
        let priority = try Self.priority(of: request.acdAttributes, floor: configuration.accessibilityPriority)

        issued[rtcId] = nil
        let record = InteractionRecord(
            rtcId: rtcId, interactionId: ids.interactionId(), callerName: request.callerName,
            attributes: request.attributes.merging(configuration.attributeDefaults(for: queue)) { dialed, _ in dialed },
            acdAttributes: request.acdAttributes,
            customPayload: request.customPayload, queue: queue, priority: priority,
            callerToken: configuration.issuesCallerTokens ? ids.token() : nil,
            sequence: nextSequence(), phase: .queued)
        enterACD(record)
        return DialExResponse(rtcId: rtcId, interactionId: record.interactionId, queue: queue, priority: priority,
                              callerToken: record.callerToken)
    }

    /// Places a new call (dialed or transferred) in its queue, after the entry delay if there is one.
    mutating func enterACD(_ record: InteractionRecord) {
        var record = record
        if configuration.queueEntryDelay > 0 {
            record.phase = .entering(until: now + configuration.queueEntryDelay)
            interactions[record.rtcId] = record
        } else {
            record.phase = .queued
            record.queuedAt = now
            interactions[record.rtcId] = record
            route()
        }
    }

    /// The routing priority from acdAttributes: `priority` (an integer, default 0), lifted to at
    /// least `floor` when the caller is flagged hearing or visually impaired.
    static func priority(of attributes: [String: String], floor: Int) throws(ACDError) -> Int {
        var priority = 0
        if let raw = attributes[ACDAttributeKey.priority] {
            guard let value = Int(raw.trimmingCharacters(in: .whitespaces)) else {
                throw .invalidField(field: "acdAttributes.\(ACDAttributeKey.priority)",
                                    reason: "expected an integer, got \"\(raw)\"")
            }
            priority = value
        }
        var impaired = false
        for key in [ACDAttributeKey.hearingImpaired, ACDAttributeKey.visuallyImpaired] {
            guard let raw = attributes[key] else { continue }
            switch raw.lowercased() {
            case "true": impaired = true
            case "false": break
            default: throw .invalidField(field: "acdAttributes.\(key)", reason: "expected \"true\" or \"false\", got \"\(raw)\"")
            }
        }
        return impaired ? max(priority, floor) : priority
    }

    /// The caller ends the call, whatever its phase. Idempotent while the outcome is remembered.
    mutating func callerHangUp(rtcId: String) throws(ACDError) {
        guard let record = interactions[rtcId] else {
            if ended[rtcId] != nil { return }
            if issued.removeValue(forKey: rtcId) != nil { return }
            throw .unknownRtcId(rtcId)
        }
        endCall(record, reason: .callerHangup, withdrawReason: .callerHangup)
    }

    /// The caller vanished (the service saw neither socket nor poll for too long): the call ends
    /// with `CALLER_LOST`. Nothing happens to a call that already ended.
    mutating func callerLost(rtcId: String) {
        guard let record = interactions[rtcId] else { return }
        endCall(record, reason: .callerLost, withdrawReason: .callerHangup)
    }

    /// Ends a live call for `reason`: the caller hears `call_ended`, an agent ringing for it sees
    /// the offer withdrawn, a connected agent gets `call_ended` and starts wrap-up, and a pending
    /// transfer's target sees its offer withdrawn.
    mutating func endCall(_ record: InteractionRecord, reason: CallEndReason, withdrawReason: OfferWithdrawnReason) {
        let rtcId = record.rtcId
        if let transfer = record.transfer {
            transferLegs[transfer.newRtcId] = nil
            releaseRinging(agentId: transfer.targetAgentId)
            emit(.toAgent(agentId: transfer.targetAgentId,
                          .offerWithdrawn(rtcId: transfer.newRtcId, reason: withdrawReason)))
            emitAgentState(transfer.targetAgentId)
        }
        emit(.toCaller(rtcId: rtcId, .callEnded(rtcId: rtcId, reason: reason)))
        switch record.phase {
        case .entering, .queued:
            forget(rtcId, outcome: .ended(reason))
        case .offered(let agentId, _):
            releaseRinging(agentId: agentId)
            emit(.toAgent(agentId: agentId, .offerWithdrawn(rtcId: rtcId, reason: withdrawReason)))
            forget(rtcId, outcome: .ended(reason))
            emitAgentState(agentId)
        case .connected(let agentId, let since):
            emit(.toAgent(agentId: agentId, .callEnded(rtcId: rtcId, reason: reason)))
            recordHandleTime(queue: record.queue, since: since)
            forget(rtcId, outcome: .ended(reason))
            finishCall(agentId: agentId)
        }
        route()
    }
}
