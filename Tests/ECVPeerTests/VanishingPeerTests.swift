import ECVPeer
import ECVService
import ECVTestSupport
import Foundation
import Testing

/// A peer that vanishes (its `ecv peer` process SIGKILLed: no LEAVE, no closing channel) ends its
/// calls and data connections on the other side: the server notices the dead socket and, after
/// the reconnect grace, sends LEAVE to the peers it talked to (`announcesDroppedPeers`, which
/// peerjs-server does not do).
@Suite(.serialized) struct VanishingPeerTests {
    @Test func aKilledPeerProcessClosesItsConnectionsOnTheOtherSide() async throws {
        let backend = try await PeerBackend.start { $0.leaveGrace = .milliseconds(500); $0.announcesDroppedPeers = true }
        let child = Process()
        child.executableURL = BuiltExecutable.url(named: "ecv")
        child.arguments = ["peer", "--server", "http://127.0.0.1:\(backend.port)/peerjs", "--key", "demo", "--id", "victim", "--answer",
                           "--width", "320", "--height", "240", "--fps", "15", "--json"]
        child.standardOutput = FileHandle.nullDevice
        child.standardError = FileHandle.nullDevice
        try child.run()
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
}
