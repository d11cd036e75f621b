import WebRTC

/// How a call leg reaches the other side: the AppRTC room of the ECV system (the caller's and the
/// agent's legs) or a PeerJS connection through a peer's server socket (ECVPeer). The leg asks
/// for the connection once, sends the peer's offers, answers and candidates through it, and
/// relays what arrives to the peer in arrival order.
package protocol CallLegSignaling: Sendable {
    /// What the other side sends from now on. Subscribed before `connect()`: what arrives while
    /// it runs (messages waiting for this side) waits in the stream until the peer exists.
    func events() -> AsyncStream<CallSignalingEvent>
    /// Reaches the other side (joins the room, opens and registers its socket; a PeerJS
    /// connection is reached already) and says how the leg takes part.
    func connect() async throws(CallLegError) -> SignalingReady
    /// The peer's offer, answer or candidate, to the other side.
    func send(_ message: SignalingMessage)
    /// Ends the signaling; `peer` (when it exists) is closed by then, after the other side was
    /// told (`bye`) when `sendBye` and the signaling has such a message.
    func close(peer: PeerConnection?, sendBye: Bool) async
}

/// What a connected signaling says about the call.
package struct SignalingReady: Sendable {
    package var role: PeerConnection.Role
    /// ICE servers the signaling handed out (a join answer's), used before the configured ones.
    package var iceServers: [ICEServer]
    /// Messages that came with the connection (the join answer's), given to the peer first.
    package var waiting: [SignalingMessage]

    package init(role: PeerConnection.Role, iceServers: [ICEServer] = [], waiting: [SignalingMessage] = []) {
        self.role = role
        self.iceServers = iceServers
        self.waiting = waiting
    }
}

/// What a signaling reports while the call runs.
package enum CallSignalingEvent: Sendable {
    /// The other side's offer, answer or candidate.
    case message(SignalingMessage)
    /// The other side left (the room's `bye`).
    case remoteLeft
    case failure(String)
    /// The socket dropped and is being reopened (why); media keeps flowing.
    case reconnecting(String)
    case reconnected
    /// The socket closed for good.
    case closed(code: UInt16, reason: String)
}
