import CallEngine
import ECVProtocol
import WebRTC

/// How a connection reaches the other peer: through its peer's server socket, with the
/// connection's type and id in every payload as PeerJS writes them.
struct ConnectionSignaling: Sendable {
    let remotePeer: String
    let connectionId: String
    let type: PeerJSConnectionType
    let send: @Sendable (PeerJSMessage) -> Bool
    /// What an offer carries besides the SDP (metadata; a data connection's label, reliability, serialization).
    let offerExtras: @Sendable (inout PeerJSDescriptionPayload) -> Void

    /// The peer connection's message, as PeerJS sends it. `bye` has no PeerJS form (a connection
    /// closes by its data channel, a peer by `LEAVE`).
    func relay(_ message: WebRTC.SignalingMessage) {
        switch message {
        case .offer(let sdp):
            var payload = PeerJSDescriptionPayload(sdpType: "offer", sdp: sdp, connectionType: type, connectionId: connectionId)
            offerExtras(&payload)
            _ = send(PeerJSMessage(type: .offer, dst: remotePeer, payload: payload.value))
        case .answer(let sdp):
            let payload = PeerJSDescriptionPayload(sdpType: "answer", sdp: sdp, connectionType: type, connectionId: connectionId)
            _ = send(PeerJSMessage(type: .answer, dst: remotePeer, payload: payload.value))
        case .candidate(let mline, let mid, let candidate):
            let payload = PeerJSCandidatePayload(candidate: candidate.hasPrefix("a=") ? String(candidate.dropFirst(2)) : candidate,
                                                 sdpMLineIndex: mline, sdpMid: mid, connectionType: type, connectionId: connectionId)
            _ = send(PeerJSMessage(type: .candidate, dst: remotePeer, payload: payload.value))
        case .bye:
            break
        }
    }

    /// The other peer's OFFER, ANSWER or CANDIDATE as the peer connection takes it; nil for
    /// anything else (end-of-candidates, other types).
    static func webrtcMessage(_ message: PeerJSMessage) throws(ProtocolError) -> WebRTC.SignalingMessage? {
        switch message.type {
        case .offer, .answer:
            let description = try PeerJSDescriptionPayload(message.payload)
            return description.sdpType == "offer" ? .offer(sdp: description.sdp) : .answer(sdp: description.sdp)
        case .candidate:
            let candidate = try PeerJSCandidatePayload(message.payload)
            guard !candidate.candidate.isEmpty else { return nil }
            return .candidate(mlineIndex: candidate.sdpMLineIndex, mid: candidate.sdpMid, candidate: candidate.candidate)
        default:
            return nil
        }
    }
}

extension ConnectionSignaling {
    /// The other peer's message as the peer connection takes it; a bad one is reported and dropped.
    static func incoming(_ message: PeerJSMessage, from peer: String, report: (PeerError) -> Void) -> WebRTC.SignalingMessage? {
        do { return try webrtcMessage(message) } catch {
            report(PeerError(.negotiationFailed, "\(peer) sent a bad \(message.type.rawValue): \(error)"))
            return nil
        }
    }
}

/// The ICE servers and policy a connection is set up with (read when it starts), and how long a
/// data connection's transport may stay silent (`PeerOption.dataConnectionSilenceLimit`).
struct PeerICE: Sendable {
    var servers: [ICEServer]
    var policy: ECVProtocol.ICETransportPolicy = .all
    var dataSilenceLimit = PeerOption.defaultDataConnectionSilenceLimit
}

extension PeerError {
    /// Why a connection's call leg did not start (`what`: the connection, for the message), as
    /// PeerJS names it: an impossible request is an invalid argument, anything else WebRTC's.
    init(legFailure error: CallLegError, starting what: String) {
        switch error {
        case .relayWithoutTURN:
            self.init(.invalidArgument, "the ICE transport policy is relay, but no TURN server is configured or handed out by the server",
                      cause: error.failure)
        case .peer(let peerError) where peerError.isUnsupported:
            self.init(.invalidArgument, "\(what) did not start: \(peerError)", cause: error.failure)
        default: self.init(.webrtc, "\(what) did not start: \(error)", cause: error.failure)
        }
    }
}

/// A peer connection's configuration for a PeerJS connection.
func peerConfiguration(ice: PeerICE, media: MediaConfiguration) -> PeerConfiguration {
    PeerConfiguration(iceServers: ice.servers.map(WebRTC.ICEServer.init), iceTransportPolicy: ice.policy == .relay ? .relay : .all, media: media)
}

/// A call leg's signaling through the peer's server socket: the connection's messages go out as
/// PeerJS OFFER/ANSWER/CANDIDATE; the far end's arrive through `deliver` (the peer routes them by
/// connection id) and wait, bounded, until the leg's peer exists. A PeerJS connection is reached
/// already when it is created (the CALL, or the offer that made it), so connecting says only the role.
final class PeerJSLegSignaling: CallLegSignaling {
    let connection: ConnectionSignaling
    private let role: PeerConnection.Role
    private let stream: AsyncStream<CallSignalingEvent>
    private let continuation: AsyncStream<CallSignalingEvent>.Continuation
    /// What may wait for the peer: an offer and its early candidates (a browser sends a few dozen).
    static let maxWaiting = 128

    init(_ connection: ConnectionSignaling, role: PeerConnection.Role) {
        self.connection = connection
        self.role = role
        (stream, continuation) = AsyncStream.makeStream(of: CallSignalingEvent.self, bufferingPolicy: .bufferingOldest(Self.maxWaiting))
    }

    /// The one stream of the far end's messages (a connection has one leg, which takes it once).
    func events() -> AsyncStream<CallSignalingEvent> { stream }

    func connect() async throws(CallLegError) -> SignalingReady { SignalingReady(role: role) }

    func send(_ message: WebRTC.SignalingMessage) { connection.relay(message) }

    /// The far end's offer, answer or candidate.
    func deliver(_ message: WebRTC.SignalingMessage) { continuation.yield(.message(message)) }

    /// PeerJS has no `bye` for a connection: it ends by its data channel, a peer by `LEAVE`.
    func close(peer: PeerConnection?, sendBye: Bool) async {
        continuation.finish()
        await peer?.close()
    }
}
