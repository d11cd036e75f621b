/// Which ICE candidates a call may use (the customization guide's "ICE filtering modes",
/// WebRTC's `RTCIceTransportPolicy`): every kind, or relayed through a TURN server only, which
/// hides both parties' addresses from each other and works through the strictest firewalls.
public enum ICETransportPolicy: String, Sendable, Hashable, CaseIterable, Codable {
    case all, relay
}

