import GStreamer

/// webrtcbin's four states as last notified, and the single summary state derived from them plus
/// our liveness watchdog.
struct ObservedStates {
    var signaling = SignalingState.stable
    var ice = ICEConnectionState.new
    var gathering = ICEGatheringState.new
    var connection = ConnectionState.new
    var stall: PeerState?
    var closed = false
    var unified = PeerState.new

    /// Takes the states webrtcbin had when it notified; returns an event for each that changed.
    mutating func take(_ snapshot: WebRTCStates) -> [PeerEvent] {
        var events: [PeerEvent] = []
        if snapshot.signaling != signaling { signaling = snapshot.signaling; events.append(.signalingStateChanged(signaling)) }
        if snapshot.gathering != gathering { gathering = snapshot.gathering; events.append(.iceGatheringStateChanged(gathering)) }
        if snapshot.ice != ice { ice = snapshot.ice; events.append(.iceConnectionStateChanged(ice)) }
        if snapshot.connection != connection {
            connection = snapshot.connection
            events.append(.connectionStateChanged(connection))
            if connection == .connected { stall = nil }
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
            case .connected: next = stall ?? .connected
            case .failed: next = .failed
            case .disconnected: next = .disconnected
            case .closed: next = .closed
            case .connecting: next = .connecting
            case .new: next = ice == .checking ? .connecting : .new
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
    var signaling: SignalingState
    var ice: ICEConnectionState
    var gathering: ICEGatheringState
    var connection: ConnectionState

    init(_ webrtc: WebRTCBin) {
        signaling = SignalingState(webrtc)
        ice = ICEConnectionState(webrtc.iceConnectionState)
        gathering = ICEGatheringState(webrtc.iceGatheringState)
        connection = ConnectionState(webrtc.connectionState)
    }
}

/// webrtcbin's `signaling-state` (GstWebRTCSignalingState).
package enum SignalingState: String, Sendable {
    case stable, closed
    case haveLocalOffer = "have-local-offer", haveRemoteOffer = "have-remote-offer"
    case haveLocalPranswer = "have-local-pranswer", haveRemotePranswer = "have-remote-pranswer"

    /// The state webrtcbin is in now (a value GStreamer 1.22 does not have reads as closed).
    init(_ webrtc: WebRTCBin) {
        self = switch webrtc.signalingState {
        case .stable: .stable
        case .haveLocalOffer: .haveLocalOffer
        case .haveRemoteOffer: .haveRemoteOffer
        case .haveLocalPranswer: .haveLocalPranswer
        case .haveRemotePranswer: .haveRemotePranswer
        case .closed, .unknown: .closed
        }
    }
}

/// webrtcbin's `ice-connection-state` (GstWebRTCICEConnectionState).
package enum ICEConnectionState: String, Sendable {
    case new, checking, connected, completed, failed, disconnected, closed

    /// webrtcbin's state (a value GStreamer 1.22 does not have reads as new).
    init(_ state: WebRTCBin.ICEConnectionState) {
        self = switch state {
        case .new, .unknown: .new
        case .checking: .checking
        case .connected: .connected
        case .completed: .completed
        case .failed: .failed
        case .disconnected: .disconnected
        case .closed: .closed
        }
    }
}

/// webrtcbin's `ice-gathering-state` (GstWebRTCICEGatheringState).
package enum ICEGatheringState: String, Sendable {
    case new, gathering, complete

    /// webrtcbin's state (a value GStreamer 1.22 does not have reads as new).
    init(_ state: WebRTCBin.ICEGatheringState) {
        self = switch state {
        case .new, .unknown: .new
        case .gathering: .gathering
        case .complete: .complete
        }
    }
}

/// webrtcbin's `connection-state` (GstWebRTCPeerConnectionState).
package enum ConnectionState: String, Sendable {
    case new, connecting, connected, disconnected, failed, closed

    /// webrtcbin's state (a value GStreamer 1.22 does not have reads as new).
    init(_ state: WebRTCBin.PeerConnectionState) {
        self = switch state {
        case .new, .unknown: .new
        case .connecting: .connecting
        case .connected: .connected
        case .disconnected: .disconnected
        case .failed: .failed
        case .closed: .closed
        }
    }
}
