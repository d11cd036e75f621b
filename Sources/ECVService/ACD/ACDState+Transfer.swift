import ECVProtocol

/// Call transfer (the Turkish guide §7.1): the caller sees `transfer_pending`, then either
/// `transfer_cancelled` (the call goes on) or `transfer_completed` with a new rtcId, under which it
/// waits again without dialing.
extension ACDState {
    mutating func startTransfer(rtcId: String, agentId: String, to target: TransferTarget) throws(ACDError) {
        guard configuration.transfersEnabled else { throw .transferUnsupported }
        var record = try requireConnected(rtcId: rtcId, agentId: agentId)
        guard record.transfer == nil else { throw .invalidState("a transfer of \"\(rtcId)\" is already pending") }
        switch target {
        case .queue(let queue):
            try requireQueue(queue, field: "target.queue")
            transferToQueue(record, queue: queue)
        case .agent(let targetId):
            let targetAgent = try requireAgent(targetId)
            guard targetId != agentId, targetAgent.isAvailable else { throw .targetUnavailable(agentId: targetId) }
            let transfer = PendingTransfer(targetAgentId: targetId, newRtcId: freshRtcId(),
                                           newInteractionId: ids.interactionId(),
                                           until: now + configuration.offerTimeout)
            record.transfer = transfer
            interactions[rtcId] = record
            transferLegs[transfer.newRtcId] = rtcId
            agents[targetId]?.activity = .ringing(rtcId: transfer.newRtcId)
            emit(.toCaller(rtcId: rtcId, .transferPending(rtcId: rtcId, target: target)))
            emit(.toAgent(agentId: agentId, .transferPending(rtcId: rtcId, target: target)))
            emit(.toAgent(agentId: targetId, .offer(CallOffer(
                rtcId: transfer.newRtcId, interactionId: transfer.newInteractionId, callerName: record.callerName,
                queue: record.queue, attributes: record.attributes, acdAttributes: record.acdAttributes,
                customPayload: record.customPayload, priority: record.priority,
                timeoutSeconds: configuration.offerTimeout,
                transfer: TransferOrigin(fromAgentId: agentId, fromRtcId: rtcId)))))
            emitAgentState(targetId)
        }
    }

    /// A blind transfer: pending and completed at once; the new leg queues like a new call, never
    /// offered back to the agent who transferred it.
    private mutating func transferToQueue(_ record: InteractionRecord, queue: String) {
        guard case .connected(let agentId, let since) = record.phase else { return }
        let oldRtcId = record.rtcId
        let newRtcId = freshRtcId()
        emit(.toCaller(rtcId: oldRtcId, .transferPending(rtcId: oldRtcId, target: .queue(queue))))
        emit(.toAgent(agentId: agentId, .transferPending(rtcId: oldRtcId, target: .queue(queue))))
        emit(.toCaller(rtcId: oldRtcId, .transferCompleted(rtcId: oldRtcId, newRtcId: newRtcId)))
        emit(.toAgent(agentId: agentId, .transferCompleted(rtcId: oldRtcId, newRtcId: newRtcId)))
        recordHandleTime(queue: record.queue, since: since)
        forget(oldRtcId, outcome: .transferred(newRtcId: newRtcId))
        finishCall(agentId: agentId)
        var leg = newLeg(of: record, rtcId: newRtcId, interactionId: ids.interactionId(), queue: queue)
        leg.declinedBy = [agentId]
        enterACD(leg)
    }

    /// The target agent accepted a direct transfer: the old leg ends as transferred and the new leg
    /// is connected to the target straight away.
    mutating func completeAgentTransfer(of oldRtcId: String) {
        guard let record = interactions[oldRtcId], let transfer = record.transfer,
              case .connected(let agentId, let since) = record.phase else { return }
        transferLegs[transfer.newRtcId] = nil
        emit(.toCaller(rtcId: oldRtcId, .transferCompleted(rtcId: oldRtcId, newRtcId: transfer.newRtcId)))
        emit(.toAgent(agentId: agentId, .transferCompleted(rtcId: oldRtcId, newRtcId: transfer.newRtcId)))
        recordHandleTime(queue: record.queue, since: since)
        forget(oldRtcId, outcome: .transferred(newRtcId: transfer.newRtcId))
        finishCall(agentId: agentId)
        var leg = newLeg(of: record, rtcId: transfer.newRtcId, interactionId: transfer.newInteractionId,
                         queue: record.queue)
        leg.queuedAt = now
        interactions[leg.rtcId] = leg
        connect(rtcId: leg.rtcId, agentId: transfer.targetAgentId)
        route()
    }

    /// A pending direct transfer ends without effect; the call goes on with the transferring agent.
    mutating func cancelTransfer(of rtcId: String, reason: TransferCancelReason) {
        guard var record = interactions[rtcId], let transfer = record.transfer,
              let agentId = record.connectedAgentId else { return }
        record.transfer = nil
        interactions[rtcId] = record
        transferLegs[transfer.newRtcId] = nil
        emit(.toCaller(rtcId: rtcId, .transferCancelled(rtcId: rtcId, reason: reason)))
        emit(.toAgent(agentId: agentId, .transferCancelled(rtcId: rtcId, reason: reason)))
        let target = transfer.targetAgentId
        switch reason {
        case .refused:
            releaseRinging(agentId: target)
            emitAgentState(target)
        case .cancelled:
            releaseRinging(agentId: target)
            emit(.toAgent(agentId: target, .offerWithdrawn(rtcId: transfer.newRtcId, reason: .cancelled)))
            emitAgentState(target)
        case .timeout:
            setNoAnswer(target)
            emit(.toAgent(agentId: target, .offerWithdrawn(rtcId: transfer.newRtcId, reason: .timeout)))
            emitAgentState(target)
        case .targetLost:
            releaseRinging(agentId: target)
        }
        route()
    }

    private mutating func newLeg(of record: InteractionRecord, rtcId: String, interactionId: String,
                                 queue: String) -> InteractionRecord {
        InteractionRecord(
            rtcId: rtcId, interactionId: interactionId, callerName: record.callerName,
            attributes: record.attributes, acdAttributes: record.acdAttributes,
            customPayload: record.customPayload, queue: queue, priority: record.priority,
            callerToken: record.callerToken, sequence: nextSequence(), phase: .queued)
    }

    mutating func freshRtcId() -> String {
        var rtcId = ids.rtcId()
        while isKnown(rtcId) { rtcId = ids.rtcId() }
        return rtcId
    }
}
