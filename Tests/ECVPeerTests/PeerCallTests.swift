import ECVPeer
import ECVService
import ECVTestSupport
import GLibCore
import Foundation
import Testing

/// Two (or three) ECVKit peers on the embedded peer server, as the tutorial's app uses them.
@Suite(.serialized) struct PeerCallTests {
    static func constraints(codec: String = "VP8", video: Bool = true) -> MediaConstraints {
        MediaConstraints(maxWidth: 320, maxHeight: 240, maxFrameRate: 15, videoFlag: video, videoCodec: codec)
    }

    @Test func openWithAssignedAndChosenIdsAndListAllPeers() async throws {
        let backend = try await PeerBackend.start()
        let (assigned, assignedEvents) = try await backend.openPeer()
        let (chosen, _) = try await backend.openPeer(id: "alice")
        guard case .open(let assignedId) = try await assignedEvents.first("OPEN", { if case .open = $0 { true } else { false } }) else { return }
        #expect(assignedId.count == 36, "the server's id is a UUID: \(assignedId)")
        #expect(assigned.id == assignedId)
        #expect(chosen.id == "alice")
        let peers = await chosen.listAllPeers()
        #expect(Set(peers) == [assignedId, "alice"])
        // A callback set after OPEN still hears it, as the tutorial sets callbacks after creating the peer.
        let heard = Locked<String?>(nil)
        chosen.on(.OPEN) { event in if case .open(let id) = event { heard.withLock { $0 = id } } }
        #expect(heard.withLock { $0 } == "alice")
        await assigned.destroy()
        await chosen.destroy()
        await backend.stop()
    }

    @Test func takenIdAndInvalidKeyAreTypedErrors() async throws {
        let backend = try await PeerBackend.start()
        let (first, _) = try await backend.openPeer(id: "bob")
        let second = Peer(id: "bob", options: backend.options())
        let secondEvents = Events(second.events())
        let taken = try await secondEvents.first("ERROR") { $0.error != nil }.error
        #expect(taken?.kind == .unavailableID)
        #expect(second.isDestroyed)
        // Options no peer could run with are refused before the server hears of them.
        for broken in [{ (options: inout PeerOption) in options.dataConnectionSilenceLimit = .zero },
                       { (options: inout PeerOption) in options.heartbeatInterval = .seconds(-1) },
                       { (options: inout PeerOption) in options.port = 70_000 }] {
            var options = backend.options()
            broken(&options)
            let refusedPeer = Peer(id: "frank", options: options)
            let error = try await Events(refusedPeer.events()).first("ERROR") { $0.error != nil }.error
            #expect(error?.kind == .invalidArgument && refusedPeer.isDestroyed, "\(String(describing: error))")
        }
        let stranger = Peer(id: "carol", options: backend.options(key: "nokey"))
        let strangerEvents = Events(stranger.events())
        #expect(try await strangerEvents.first("ERROR") { $0.error != nil }.error?.kind == .invalidKey)
        // A key with allowed domains refuses another origin and admits its own.
        let outsider = Peer(id: "dave", options: backend.options(key: "web", domain: "elsewhere.example"))
        let outsiderEvents = Events(outsider.events())
        let refused = try await outsiderEvents.first("ERROR") { $0.error != nil }.error
        #expect(refused?.kind == .serverError && refused?.message.contains("not allowed") == true, "\(String(describing: refused))")
        let insider = Peer(id: "erin", options: backend.options(key: "web", domain: "allowed.example"))
        try await Events(insider.events()).first("OPEN") { if case .open = $0 { true } else { false } }
        // Discovery is off for this key.
        #expect(await insider.listAllPeers().isEmpty)
        for peer in [first, second, stranger, outsider, insider] { await peer.destroy() }
        await backend.stop()
    }

    @Test(arguments: ["VP8", "VP9", "H264", "audio"])
    func callAndAnswerWithMediaBothWays(_ codec: String) async throws {
        let backend = try await PeerBackend.start()
        let (caller, callerEvents) = try await backend.openPeer(id: "caller-\(codec)")
        let (callee, calleeEvents) = try await backend.openPeer(id: "callee-\(codec)")
        let video = codec != "audio"
        let local = try Navigator.getUserMedia(constraints: Self.constraints(codec: video ? codec : "VP8", video: video))
        let answering = try Navigator.getUserMedia(constraints: Self.constraints(codec: video ? codec : "VP8", video: video))
        let outgoing = caller.call(peerId: "callee-\(codec)", stream: local)
        let outgoingEvents = Events(outgoing.events())
        let incoming = try #require(try await calleeEvents.first("CALL") { $0.call != nil }.call)
        #expect(incoming.peer == "caller-\(codec)")
        #expect(incoming.connectionId == outgoing.connectionId)
        let incomingEvents = Events(incoming.events())
        incoming.answer(stream: answering)
        let remoteAtCaller = try #require(try await outgoingEvents.first("STREAM at the caller") { $0.stream != nil }.stream)
        let remoteAtCallee = try #require(try await incomingEvents.first("STREAM at the callee") { $0.stream != nil }.stream)
        if video {
            try await eventually(.seconds(15), "video frames both ways") {
                remoteAtCaller.videoFrameCount >= 10 && remoteAtCallee.videoFrameCount >= 10
            }
            let codecs = await outgoing.negotiatedCodecs()
            #expect(codecs["video"]?.hasPrefix(codec) == true, "\(codecs)")
        } else {
            try await eventually(.seconds(15), "audio packets both ways") {
                let a = await outgoing.stats()?.inbound.filter { $0.kind == .audio }.map(\.packetsReceived).reduce(0, +) ?? 0
                let b = await incoming.stats()?.inbound.filter { $0.kind == .audio }.map(\.packetsReceived).reduce(0, +) ?? 0
                return a >= 20 && b >= 20
            }
            #expect(remoteAtCaller.videoTrackCount == 0)
        }
        // The caller hangs up: the callee hears CLOSE within a bounded time, and its peer CLOSE for the caller.
        let hangUp = ContinuousClock.now
        await outgoing.closeAndWait()
        try await incomingEvents.first("CLOSE at the callee", timeout: .seconds(8)) { $0.isClose }
        try await calleeEvents.first("peer CLOSE", timeout: .seconds(2)) { if case .close("caller-\(codec)") = $0 { true } else { false } }
        print("peer call \(codec): the callee saw CLOSE \(ContinuousClock.now - hangUp) after the caller closed")
        #expect(callerEvents.all.allSatisfy { $0.error == nil }, "\(callerEvents.all)")
        await caller.destroy()
        await callee.destroy()
        await backend.stop()
    }

    @Test func callRecordsBothDirections() async throws {
        let backend = try await PeerBackend.start()
        let (caller, _) = try await backend.openPeer(id: "rec-caller")
        let (callee, calleeEvents) = try await backend.openPeer(id: "rec-callee")
        let outgoing = caller.call(peerId: "rec-callee", stream: try Navigator.getUserMedia(constraints: Self.constraints()))
        let outgoingEvents = Events(outgoing.events())
        let incoming = try #require(try await calleeEvents.first("CALL") { $0.call != nil }.call)
        incoming.answer(stream: try Navigator.getUserMedia(constraints: Self.constraints()))
        let remote = try #require(try await outgoingEvents.first("STREAM") { $0.stream != nil }.stream)
        try await eventually(.seconds(15), "frames") { remote.videoFrameCount >= 5 }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("peer-call-\(UUID().uuidString).mkv")
        defer { try? FileManager.default.removeItem(at: file) } // a test's scratch file: gone either way
        try await outgoing.startRecording(to: file)
        try await eventually(.seconds(15), "frames while recording") { remote.videoFrameCount >= 40 }
        let summary = try #require(try await outgoing.stopRecording())
        let kinds = summary.tracks.map { "\($0)" }.sorted()
        #expect(summary.tracks.count == 4, "both directions, video and audio: \(kinds)")
        #expect((try? FileManager.default.attributesOfItem(atPath: file.path)[.size] as? Int) ?? 0 > 10_000) // no file: 0 fails the expectation
        await caller.destroy()
        await callee.destroy()
        await backend.stop()
    }

    @Test func severalMediaConnectionsOnOnePeer() async throws {
        let backend = try await PeerBackend.start()
        let (hub, hubEvents) = try await backend.openPeer(id: "hub")
        let (left, _) = try await backend.openPeer(id: "left")
        let (right, _) = try await backend.openPeer(id: "right")
        let hubStream = try Navigator.getUserMedia(constraints: Self.constraints())
        let fromLeft = left.call(peerId: "hub", stream: try Navigator.getUserMedia(constraints: Self.constraints()))
        let fromRight = right.call(peerId: "hub", stream: try Navigator.getUserMedia(constraints: Self.constraints()))
        let leftEvents = Events(fromLeft.events()), rightEvents = Events(fromRight.events())
        try await eventually(.seconds(10), "two CALLs at the hub") { hubEvents.all.compactMap(\.call).count == 2 }
        let calls = hubEvents.all.compactMap(\.call)
        for call in calls { call.answer(stream: hubStream) }
        #expect(Set(calls.map(\.peer)) == ["left", "right"])
        #expect(hub.mediaConnections.count == 2)
        let atLeft = try #require(try await leftEvents.first("STREAM at left") { $0.stream != nil }.stream)
        let atRight = try #require(try await rightEvents.first("STREAM at right") { $0.stream != nil }.stream)
        var atHub: [MediaStream] = []
        for call in calls { atHub.append(try #require(try await Events(call.events()).first("STREAM at the hub") { $0.stream != nil }.stream)) }
        let hubStreams = atHub
        try await eventually(.seconds(20), "frames on all four legs") {
            atLeft.videoFrameCount >= 10 && atRight.videoFrameCount >= 10 && hubStreams.allSatisfy { $0.videoFrameCount >= 10 }
        }
        // One leg ends; the other carries on.
        await fromLeft.closeAndWait()
        let before = atRight.videoFrameCount
        try await eventually(.seconds(10), "the right leg still flows") { atRight.videoFrameCount >= before + 10 }
        try await eventually(.seconds(8), "the hub dropped the left leg") { hub.mediaConnections.map(\.peer) == ["right"] }
        // The callee hangs up the other: the caller hears CLOSE.
        let rightAtHub = try #require(calls.first { $0.peer == "right" })
        await rightAtHub.closeAndWait()
        try await rightEvents.first("CLOSE at right", timeout: .seconds(8)) { $0.isClose }
        for peer in [hub, left, right] { await peer.destroy() }
        await backend.stop()
        // The four legs' WebRTC connections (pipelines, webrtcbins) are gone, though the test still holds
        // the peers and connection objects.
        do {
            try await eventually(.seconds(10), "no peer connection left") { InstanceCounter.live["PeerConnection", default: 0] == 0 }
        } catch {
            Issue.record("still alive: \(InstanceCounter.live)")
        }
    }

    @Test func callToUnknownPeerIsPeerUnavailable() async throws {
        let backend = try await PeerBackend.start { $0.expireTimeout = .seconds(1) }
        let (caller, callerEvents) = try await backend.openPeer(id: "lonely")
        let outgoing = caller.call(peerId: "nobody", stream: try Navigator.getUserMedia(constraints: Self.constraints(video: false)))
        let outgoingEvents = Events(outgoing.events())
        let error = try await callerEvents.first("ERROR", timeout: .seconds(10)) { $0.error != nil }.error
        #expect(error?.kind == .peerUnavailable)
        try await outgoingEvents.first("CLOSE of the unanswered call", timeout: .seconds(5)) { $0.isClose }
        await caller.destroy()
        await backend.stop()
    }
}

/// The server connection comes and goes; calls with other peers carry on.
@Suite(.serialized) struct PeerServerConnectionTests {
    @Test func disconnectKeepsCallsAndReconnectTakesTheSameIdBack() async throws {
        let backend = try await PeerBackend.start()
        let (caller, callerEvents) = try await backend.openPeer(id: "roamer")
        let (callee, calleeEvents) = try await backend.openPeer(id: "home")
        let call = caller.call(peerId: "home", stream: try Navigator.getUserMedia(constraints: PeerCallTests.constraints()))
        let callEvents = Events(call.events())
        let incoming = try #require(try await calleeEvents.first("CALL") { $0.call != nil }.call)
        incoming.answer(stream: try Navigator.getUserMedia(constraints: PeerCallTests.constraints()))
        let remote = try #require(try await callEvents.first("STREAM") { $0.stream != nil }.stream)
        try await eventually(.seconds(15), "frames") { remote.videoFrameCount >= 10 }

        caller.disconnect()
        try await callerEvents.first("DISCONNECTED") { if case .disconnected("roamer") = $0 { true } else { false } }
        #expect(caller.isDisconnected)
        let before = remote.videoFrameCount
        // Past the server's reconnect grace: a clean disconnect is not a vanished peer.
        try await eventually(.seconds(10), "media still flows without the server") { remote.videoFrameCount >= before + 45 }
        #expect(incoming.isOpen, "the callee's call goes on")
        let refused = caller.call(peerId: "home", stream: try Navigator.getUserMedia(constraints: PeerCallTests.constraints()))
        #expect(try await Events(refused.events()).first("ERROR") { $0.error != nil }.error?.kind == .disconnected)

        caller.reconnect()
        try await eventually(.seconds(10), "OPEN again") { caller.isOpen }
        #expect(caller.id == "roamer")
        #expect(call.isOpen)
        await caller.destroy()
        try await calleeEvents.first("CLOSE for the destroyed peer", timeout: .seconds(8)) { if case .close("roamer") = $0 { true } else { false } }
        await callee.destroy()
        await backend.stop()
    }
}
