import ECVPeer
import ECVService
import ECVTestSupport
import Foundation
import Testing

/// A peer that vanishes (its `ecv peer` process SIGKILLed: no LEAVE, no closing channel, no DTLS
/// alert) ends its calls and data connections on the other side.
@Suite(.serialized) struct VanishingPeerTests {
    /// The server notices the dead socket and, after the reconnect grace, sends LEAVE to the peers
    /// it talked to (`announcesDroppedPeers`, which peerjs-server does not do).
    @Test func aKilledPeerProcessClosesItsConnectionsOnTheOtherSide() async throws {
        let backend = try await PeerBackend.start { $0.leaveGrace = .milliseconds(500); $0.announcesDroppedPeers = true }
        let child = try Self.answeringPeer(id: "victim", backend: backend)
        defer { if child.isRunning { kill(child.processIdentifier, SIGKILL) } }
        let (peer, peerEvents) = try await backend.openPeer(id: "survivor")
        try await eventually(.seconds(20), "the child peer registered") { backend.service.peerServer?.registeredPeers(key: "demo").contains("victim") == true }
        let call = peer.call(peerId: "victim", stream: try Navigator.getUserMedia(constraints: PeerCallTests.constraints()))
        let callEvents = Events(call.events())
        let data = peer.connect(peerId: "victim", options: ConnectOption(serialization: .raw))
        let dataEvents = Events(data.events())
        let remote = try #require(try await callEvents.first("STREAM from the child") { $0.stream != nil }.stream)
        try await eventually(.seconds(15), "frames from the child") { remote.videoFrameCount >= 10 }
        try await dataEvents.first("the data connection open") { $0 == .open }

        kill(child.processIdentifier, SIGKILL)
        child.waitUntilExit()
        let killed = ContinuousClock.now
        try await callEvents.first("CLOSE of the call", timeout: .seconds(10)) { $0.isClose }
        try await dataEvents.first("CLOSE of the data connection", timeout: .seconds(5)) { $0 == .close }
        try await peerEvents.first("peer CLOSE for the victim", timeout: .seconds(5)) { if case .close("victim") = $0 { true } else { false } }
        print("vanished peer: its call closed \(ContinuousClock.now - killed) after SIGKILL")
        #expect(backend.service.peerServer?.registeredPeers(key: "demo") == ["survivor"])
        await peer.destroy()
        await backend.stop()
    }

    /// No LEAVE comes (peerjs-server's way, the default): the call ends on its 10 s without media
    /// or RTCP, the data connection when its transport brought nothing for
    /// `dataConnectionSilenceLimit`, with an error saying so. Before, the data connection stayed
    /// open until the process exited.
    @Test func aVanishedPeerIsNoticedByTheTransportsSilenceWithoutLeave() async throws {
        let backend = try await PeerBackend.start { $0.leaveGrace = .milliseconds(500) }
        let child = try Self.answeringPeer(id: "ghost", backend: backend)
        defer { if child.isRunning { kill(child.processIdentifier, SIGKILL) } }
        let limit = Duration.seconds(4)
        let (peer, _) = try await backend.openPeer(id: "survivor") { $0.dataConnectionSilenceLimit = limit }
        try await eventually(.seconds(20), "the child peer registered") { backend.service.peerServer?.registeredPeers(key: "demo").contains("ghost") == true }
        let call = peer.call(peerId: "ghost", stream: try Navigator.getUserMedia(constraints: PeerCallTests.constraints()))
        let callEvents = Events(call.events())
        let remote = try #require(try await callEvents.first("STREAM from the child") { $0.stream != nil }.stream)
        try await eventually(.seconds(15), "frames from the child") { remote.videoFrameCount >= 10 }
        // Opened last and the child killed at once: an idle data connection's transport is quiet
        // for up to ~30 s between SCTP heartbeats, longer than this test's limit.
        let data = peer.connect(peerId: "ghost", options: ConnectOption(serialization: .raw))
        let dataEvents = Events(data.events())
        try await dataEvents.first("the data connection open") { $0 == .open }

        kill(child.processIdentifier, SIGKILL)
        child.waitUntilExit()
        let killed = ContinuousClock.now
        let failure = try await dataEvents.first("ERROR of the data connection", timeout: limit + .seconds(4)) { if case .error = $0 { true } else { false } }
        try await dataEvents.first("CLOSE of the data connection", timeout: .seconds(2)) { $0 == .close }
        let dataClosed = ContinuousClock.now - killed
        if case .error(let error) = failure { #expect("\(error)".contains("nothing arrived from it for 4 s"), "\(error)") }
        try await callEvents.first("CLOSE of the call", timeout: .seconds(16) - dataClosed) { $0.isClose }
        let callClosed = ContinuousClock.now - killed
        print("vanished peer without LEAVE: data connection closed \(dataClosed), call \(callClosed) after SIGKILL")
        // The silence, not something sooner, ended them (no LEAVE comes, no DTLS alert from a killed
        // process); the last datagram came a moment before the kill, the test saw the open later.
        #expect(dataClosed >= limit / 2)
        #expect(callClosed >= .seconds(9))
        #expect(data.isOpen == false)
        await peer.destroy()
        await backend.stop()
    }

    /// `ecv peer --answer` in a child process, registered as `id`.
    static func answeringPeer(id: String, backend: PeerBackend) throws -> Process {
        let child = Process()
        child.executableURL = BuiltExecutable.url(named: "ecv")
        child.arguments = ["peer", "--server", "http://127.0.0.1:\(backend.port)/peerjs", "--key", "demo", "--id", id, "--answer",
                           "--width", "320", "--height", "240", "--fps", "15", "--json"]
        child.standardOutput = FileHandle.nullDevice
        child.standardError = FileHandle.nullDevice
        try child.run()
        return child
    }
}
