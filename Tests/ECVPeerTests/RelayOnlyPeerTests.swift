import ECVPeer
import ECVTestSupport
import Foundation
import GLibCore
import NetworkTestSupport
import Testing

/// `PeerOption.iceTransportPolicy = .relay` (`ecv peer --relay-only`): a peer call through a real
/// TURN server, coturn in a lab namespace, both peers relay-only.
@Suite(.serialized) struct RelayOnlyPeerTests {
    @Test(.enabled(if: TurnServer.unavailableReason == nil, "\(TurnServer.unavailableReason ?? "")"))
    func aPeerCallThroughTURN() async throws {
        let lab = try NetworkLab()
        defer { lab.close() }
        let turn = try await TurnServer(in: lab)
        defer { turn.close() }
        let backend = try await PeerBackend.start()
        func relayOnly(_ id: String) async throws -> (Peer, Events<PeerEvent>) {
            var options = backend.options()
            options.iceServers = [ICEServer(urls: [turn.url], username: turn.username, credential: turn.credential)]
            options.iceTransportPolicy = .relay
            let peer = Peer(id: id, options: options)
            let events = Events(peer.events())
            try await events.first("OPEN") { if case .open = $0 { true } else { false } }
            return (peer, events)
        }
        let (caller, _) = try await relayOnly("relay-caller")
        let (callee, calleeEvents) = try await relayOnly("relay-callee")
        let constraints = MediaConstraints(maxWidth: 320, maxHeight: 240, maxFrameRate: 15)
        let outgoing = caller.call(peerId: "relay-callee", stream: try Navigator.getUserMedia(constraints: constraints))
        let outgoingEvents = Events(outgoing.events())
        let incoming = try #require(try await calleeEvents.first("CALL") { $0.call != nil }.call)
        incoming.answer(stream: try Navigator.getUserMedia(constraints: constraints))
        let remote = try #require(try await outgoingEvents.first("STREAM") { $0.stream != nil }.stream)
        try await eventually(.seconds(15), "the callee's picture at the caller") { remote.videoFrameCount >= 5 }
        let pair = try #require(await outgoing.stats()?.candidatePair)
        #expect(pair.localType == "relay" && pair.remoteType == "relay" && pair.localAddress == turn.address, "\(pair)")
        await outgoing.closeAndWait()
        await caller.destroy()
        await callee.destroy()
        await backend.stop()
    }

    /// Relay-only with no TURN server anywhere: the call fails at once, as PeerJS names it
    /// (`invalid-argument`) and with the cause every product's errors carry.
    @Test func relayOnlyWithoutATURNServerFailsWithItsCause() async throws {
        let backend = try await PeerBackend.start()
        var options = backend.options()
        options.iceServers = [ICEServer(urls: ["stun:192.0.2.1:3478"])]
        options.iceTransportPolicy = .relay
        let caller = Peer(id: "no-turn-caller", options: options)
        let callerEvents = Events(caller.events())
        try await callerEvents.first("OPEN") { if case .open = $0 { true } else { false } }
        let callee = Peer(id: "no-turn-callee", options: backend.options())
        let calleeEvents = Events(callee.events())
        try await calleeEvents.first("OPEN") { if case .open = $0 { true } else { false } }
        let outgoing = caller.call(peerId: "no-turn-callee", stream: try Navigator.getUserMedia(constraints: MediaConstraints(maxWidth: 320, maxHeight: 240)))
        let events = Events(outgoing.events())
        let failed = try await events.first("ERROR") { if case .error = $0 { true } else { false } }
        guard case .error(let error) = failed else { return }
        #expect(error.kind == .invalidArgument && error.cause == .relayWithoutTURN, "\(error)")
        await outgoing.closeAndWait()
        await caller.destroy()
        await callee.destroy()
        await backend.stop()
    }
}
