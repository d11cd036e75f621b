// libFuzzer target `sockets`: the frames of the queue socket (service → caller SDK) and of the
// agent socket (agent → service commands, service → agent events). Property: round trips as in
// RoundTrip.swift, and what the SDK and the bot branch on (terminal frames, ids) holds.
import ECVProtocol
import Foundation

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSockets(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = fuzzData(data, size)
    if let message = roundTrip(QueueSocketMessage.self, bytes) {
        let terminal: Bool
        switch message {
        case .transferCompleted(let rtcId, let newRtcId):
            terminal = true
            if rtcId.isEmpty || newRtcId.isEmpty { fatalError("transfer_completed with an empty id") }
        case .callEnded(let rtcId, _): terminal = true; if rtcId.isEmpty { fatalError("call_ended without rtcId") }
        case .error: terminal = true
        case .waiting(let rtcId, _), .agentConnected(let rtcId, _, _), .transferPending(let rtcId, _),
             .transferCancelled(let rtcId, _):
            terminal = false
            if rtcId.isEmpty { fatalError("\(message.kind) without rtcId") }
        }
        guard message.isTerminal == terminal else { fatalError("\(message.kind) terminal: \(message.isTerminal)") }
    }
    if let request = roundTrip(AgentRequest.self, bytes) {
        switch request.command {
        case .accept(let rtcId), .reject(let rtcId), .hangup(let rtcId), .cancelTransfer(let rtcId), .transfer(let rtcId, _):
            if rtcId.isEmpty { fatalError("\(request.command.kind) without rtcId") }
        case .ready, .notReady: break
        }
    }
    if let event = roundTrip(AgentEvent.self, bytes), case .offer(let offer) = event {
        if offer.rtcId.isEmpty { fatalError("an offer without rtcId") }
    }
    roundTrip(CallOffer.self, bytes)
    roundTrip(AgentStateUpdate.self, bytes)
    roundTrip(TransferTarget.self, bytes)
    return 0
}
