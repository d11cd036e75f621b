import ECVPeer
import ECVTestSupport
import Foundation
import Glibc
import Testing

/// ECVKit peers on a PeerJS server that is not ECVKit's (issue #38): python-peerjs-server, an
/// asyncio port of peerjs-server, from the test venv. Its OPEN hands out no ICE servers and its
/// `/peers` answers a bare 401 when discovery is off.
@Suite(.serialized) struct ForeignPeerServerTests {
    static var hasServer: Bool { InteropEnvironment.hasVenvPackage("python_peerjs_server/main.py") }
    static let missing = "python-peerjs-server is not in the interop venv: run `make test-deps` (Tests/Interop/requirements-nodeps.txt)"

    @Test(.enabled(if: hasServer, Comment(rawValue: missing)))
    func ecvkitPeersCallAndTalkThroughAForeignServer() async throws {
        _ = TestRuntime.ready
        let port = try freeLocalPort()
        let server = Process()
        server.executableURL = URL(fileURLWithPath: InteropEnvironment.python)
        server.arguments = ["-m", "python_peerjs_server", "--host", "127.0.0.1", "--port", "\(port)", "--key", "demo", "--path", "/", "--log-level", "WARNING"]
        server.standardOutput = FileHandle.nullDevice
        server.standardError = FileHandle.nullDevice
        try server.run()
        // SIGKILL: on SIGTERM it waits for connections that are already gone, and keeps nothing worth a clean exit.
        defer { if server.isRunning { kill(server.processIdentifier, SIGKILL); server.waitUntilExit() } }
        var options = PeerOption(key: "demo", host: "127.0.0.1", port: port, path: "/")
        // What a PeerJS client would use when the server names none: PeerJS's own STUN and TURN.
        #expect(options.defaultICEServers == PeerOption.peerJSICEServers)
        options.defaultICEServers = [] // this test's traffic stays on the machine
        try await eventually(.seconds(20), "the foreign server listening") { (try? Self.connectable(port)) == true } // not yet: try again
        let alice = Peer(id: "alice", options: options), bob = Peer(id: "bob", options: options)
        let aliceEvents = Events(alice.events()), bobEvents = Events(bob.events())
        try await aliceEvents.first("alice OPEN") { if case .open = $0 { true } else { false } }
        try await bobEvents.first("bob OPEN") { if case .open = $0 { true } else { false } }
        // Discovery is off on a stock server: a server error that says so, not invalidKey.
        #expect(await alice.listAllPeers().isEmpty)
        let refusal = try #require(try await aliceEvents.first("the listing's ERROR") { $0.error != nil }.error)
        #expect(refusal.kind == .serverError && refusal.message.contains("discovery is off"), "\(refusal)")

        let stream = try Navigator.getUserMedia(constraints: PeerInteropTests.constraints)
        let call = alice.call(peerId: "bob", stream: stream)
        let callEvents = Events(call.events())
        let incoming = try #require(try await bobEvents.first("CALL at bob", timeout: .seconds(20)) { $0.call != nil }.call)
        let incomingEvents = Events(incoming.events())
        incoming.answer(stream: try Navigator.getUserMedia(constraints: PeerInteropTests.constraints))
        let atAlice = try #require(try await callEvents.first("STREAM at alice", timeout: .seconds(30)) { $0.stream != nil }.stream)
        let atBob = try #require(try await incomingEvents.first("STREAM at bob", timeout: .seconds(30)) { $0.stream != nil }.stream)
        try await eventually(.seconds(20), "frames both ways") { atAlice.videoFrameCount >= 10 && atBob.videoFrameCount >= 10 }
        let data = alice.connect(peerId: "bob")
        let dataEvents = Events(data.events())
        let taken = try #require(try await bobEvents.first("CONNECTION at bob", timeout: .seconds(20)) { $0.dataConnection != nil }.dataConnection)
        let takenEvents = Events(taken.events())
        try await dataEvents.first("data open") { $0 == .open }
        try data.send("over a foreign server")
        try await takenEvents.first("the text at bob") { $0 == .data(.text("over a foreign server")) }
        print("foreign server: frames \(atAlice.videoFrameCount) at alice, \(atBob.videoFrameCount) at bob")
        await call.closeAndWait()
        try await incomingEvents.first("CLOSE at bob", timeout: .seconds(5)) { $0.isClose }
        await alice.destroy()
        await bob.destroy()
    }

    static func connectable(_ port: Int) throws -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in(sin_family: sa_family_t(AF_INET), sin_port: in_port_t(UInt16(port).bigEndian), sin_addr: in_addr(s_addr: inet_addr("127.0.0.1")),
                                  sin_zero: (0, 0, 0, 0, 0, 0, 0, 0))
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }
}
