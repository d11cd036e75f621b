import CallEngine
import ECVProtocol
import Foundation
import GLibCore
import Synchronization
import WebRTC

extension WebRTC.ICEServer {
    /// The peer's form of an ICE server from the configuration or a join answer.
    package init(_ server: ECVProtocol.ICEServer) {
        self.init(urls: server.urls, username: server.username, credential: server.credential)
    }
}

extension RoomSignaling.Options {
    /// The room options both sides use: join timeouts and headers from the call's parameters,
    /// the signaling pins (the API's when none are given) and the participant's credential.
    package init(parameters: ConnectParameters, webrtcUrl: String, signalingUrl: String?, pins: [String], signalingPins: [String],
                 credential: String?, trustedCAFile: String?) {
        self.init(webrtcUrl: webrtcUrl, signalingUrl: signalingUrl, headers: parameters.additionalHeaders,
                  joinConnectTimeout: .milliseconds(max(1, parameters.joinHttpConnectTimeout)),
                  joinReadTimeout: .milliseconds(max(1, parameters.joinHttpReadTimeout)),
                  pinnedCertificates: signalingPins.isEmpty ? pins : signalingPins, credential: credential, trustedCAFile: trustedCAFile)
    }
}

/// The room's own steps while a leg connects, reported to the facade as they complete.
package enum RoomStep: Sendable {
    case joined(JoinParameters)
    case signalingConnected
    case signalingRegistered(clientId: String)
}

/// A call leg's signaling through the ECV system's AppRTC room, for the caller and the agent
/// alike: joins the room over REST, opens and registers the collider socket, and carries the
/// peer's messages as collider messages; `bye` on the way out when the call ends here.
package final class RoomLegSignaling: CallLegSignaling {
    private let room: RoomSignaling
    private let onStep: @Sendable (RoomStep) async -> Void

    /// Fails when the options cannot be honoured (a malformed pin, a missing CA file).
    package init(room name: String, options: RoomSignaling.Options,
                 onStep: @escaping @Sendable (RoomStep) async -> Void) throws(ECVConfigurationError) {
        room = try RoomSignaling(room: name, options: options)
        self.onStep = onStep
    }

    package func events() -> AsyncStream<CallSignalingEvent> {
        let roomEvents = room.events()
        let (stream, continuation) = AsyncStream.makeStream(of: CallSignalingEvent.self)
        let pump = Task {
            for await event in roomEvents {
                switch event {
                case .message(let message): continuation.yield(.message(message.peerMessage))
                case .failure(let reason): continuation.yield(.failure(reason))
                case .reconnecting(let reason): continuation.yield(.reconnecting(reason))
                case .reconnected: continuation.yield(.reconnected)
                case .closed(let code, let reason): continuation.yield(.closed(code: code, reason: reason))
                }
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in pump.cancel() }
        return stream
    }

    package func connect() async throws(CallLegError) -> SignalingReady {
        let joined: JoinParameters
        do { joined = try await room.join() } catch { throw .signaling(step: .join, error.description) }
        await onStep(.joined(joined))
        do {
            try await room.openSocket()
            await onStep(.signalingConnected)
            try room.register()
            await onStep(.signalingRegistered(clientId: joined.clientId))
        } catch {
            throw .signaling(step: .connect, error.description)
        }
        return SignalingReady(role: joined.isInitiator ? .offerer : .answerer, iceServers: joined.pcConfig.iceServers.map(WebRTC.ICEServer.init),
                              waiting: joined.messages.map(\.peerMessage))
    }

    package func send(_ message: WebRTC.SignalingMessage) { room.send(ECVProtocol.SignalingMessage(message)) }

    package func close(peer: PeerConnection?, sendBye: Bool) async {
        await room.hangUp(peer: peer, sendBye: sendBye)
    }
}
