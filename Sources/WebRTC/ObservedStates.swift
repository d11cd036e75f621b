import GStreamer

/// webrtcbin's four states as last read, and the single summary state derived from them plus
/// our liveness watchdog.
struct ObservedStates {
    var signaling = "stable"
    var ice = "new"
    var gathering = "new"
    var connection = "new"
    var stall: PeerState?
    var closed = false
    var unified = PeerState.new
    var lastActivity = ContinuousClock.now
    var lastBytesReceived: UInt64 = 0

    /// Takes the states webrtcbin had when it notified; returns an event for each that changed.
    mutating func take(_ snapshot: WebRTCStates) -> [PeerEvent] {
        var events: [PeerEvent] = []
        let newSignaling = snapshot.signaling, newIce = snapshot.ice
        let newGathering = snapshot.gathering, newConnection = snapshot.connection
        if newSignaling != signaling { signaling = newSignaling; events.append(.signalingStateChanged(newSignaling)) }
        if newGathering != gathering { gathering = newGathering; events.append(.iceGatheringStateChanged(newGathering)) }
        if newIce != ice { ice = newIce; events.append(.iceConnectionStateChanged(newIce)) }
        if newConnection != connection {
            connection = newConnection
            events.append(.connectionStateChanged(newConnection))
            if newConnection == "connected" { lastActivity = .now; stall = nil }
        }
        return events
    }

    /// Recomputes the summary; returns it when it changed.
    mutating func updateUnified() -> PeerState? {
        let next: PeerState
        if closed {
            next = .closed
        } else {
            switch connection {
            case "connected": next = stall ?? .connected
            case "failed": next = .failed
            case "disconnected": next = .disconnected
            case "closed": next = .closed
            case "connecting": next = .connecting
            default: next = ice == "checking" ? .connecting : .new
            }
        }
        guard next != unified else { return nil }
        unified = next
        return next
    }
}

/// webrtcbin's four states, read in its notify handler: the peer handles notifications in order,
/// some time later, and must see each as it was, not as the states are by then (a gathering
/// "complete" read early would overtake the candidates webrtcbin reported before it).
struct WebRTCStates: Sendable {
    var signaling: String
    var ice: String
    var gathering: String
    var connection: String

    init(_ webrtc: WebRTCBin) {
        signaling = webrtc.signalingState
        ice = webrtc.iceConnectionState
        gathering = webrtc.iceGatheringState
        connection = webrtc.connectionState
    }
}
