import ECVProtocol
import ECVService
import Foundation
import MediaTestSupport
import Soup
import Testing

/// The PeerJS server protocol (docs/protocol.md §8) over real sockets, frame by frame.
@Suite(.serialized) struct PeerServerTests {
    static func start(clock: ManualACDClock? = nil, _ configure: (inout PeerServerConfiguration) -> Void = { _ in }) async throws -> TestService {
        try await TestService.start { configuration in
            var peer = PeerServerConfiguration(keys: [PeerAPIKey(key: "demo", allowDiscovery: true), PeerAPIKey(key: "web", domains: ["allowed.example"]),
                                                      PeerAPIKey(key: "pair", concurrentLimit: 2)])
            peer.iceServers = [ICEServer(urls: ["stun:stun.example.org:3478"])]
            configure(&peer)
            configuration.peerServer = peer
            if let clock { configuration.clock = .manual(clock) }
        }
    }

    static func socket(_ test: TestService, key: String = "demo", id: String, token: String = "t0k3n", origin: String? = nil) async throws -> SocketProbe {
        var headers = HTTPHeaders()
        if let origin { headers["Origin"] = origin }
        return try await SocketProbe.connect(test.ws + "/peerjs/peerjs?key=\(key)&id=\(id)&token=\(token)", headers: headers)
    }

    /// An open peer socket: OPEN came.
    static func open(_ test: TestService, id: String, key: String = "demo", token: String = "t0k3n") async throws -> SocketProbe {
        let probe = try await socket(test, key: key, id: id, token: token)
        let open = try await probe.next(PeerJSMessage.self)
        #expect(open.type == .open, "\(open)")
        return probe
    }

    @Test func idsPeersAndKeysOverHTTP() async throws {
        let test = try await Self.start()
        let id = try await test.client.get(test.base + "/peerjs/demo/id")
        #expect(id.status == 200 && UUID(uuidString: id.text ?? "") != nil, "\(id.status) \(id.text ?? "")")
        #expect(try await test.client.get(test.base + "/peerjs/nokey/id").status == 401)
        #expect(try await test.client.get(test.base + "/peerjs/web/id").status == 403, "a key with domains refuses requests without an Origin")
        #expect(try await test.client.get(test.base + "/peerjs/web/id", headers: ["Origin": "https://allowed.example"]).status == 200)
        for origin in ["http://evil.com\\@allowed.example", "http://allowed.example@evil.com", "http://allowed.example.evil.com",
                       "https://allowed.example/path", "null"] {
            #expect(try await test.client.get(test.base + "/peerjs/web/id", headers: ["Origin": origin]).status == 403, "\(origin)")
        }
        #expect(try await test.client.get(test.base + "/peerjs/web/id", headers: ["Origin": "https://Allowed.Example:8443"]).status == 200)
        let a = try await Self.open(test, id: "a")
        let listed = try await test.client.get(test.base + "/peerjs/demo/peers")
        #expect(try ECVJSON.peerIds(from: listed.data) == ["a"])
        #expect(try await test.client.get(test.base + "/peerjs/pair/peers").status == 401, "discovery is off unless the key enables it")
        #expect(try await test.client.get(test.base + "/peerjs/demo/nothing").status == 404)
        a.close()
        await test.stop()
    }

    @Test func openHandsOutICEServersAndRefusalsAreTyped() async throws {
        let test = try await Self.start()
        let a = try await Self.socket(test, id: "a")
        let open = try await a.next(PeerJSMessage.self)
        #expect(open.payload?["iceServers"] == .array([.object(["urls": .array([.string("stun:stun.example.org:3478")])])]))
        // The id is taken by another token; the same token takes the socket over (a reconnect).
        let thief = try await Self.socket(test, id: "a", token: "other")
        #expect(try await thief.next(PeerJSMessage.self) == .notice(.idTaken, "ID is taken"))
        try await thief.nextClose()
        let again = try await Self.socket(test, id: "a")
        #expect(try await again.next(PeerJSMessage.self).type == .open)
        #expect(try await a.nextClose().code == 1000, "the replaced socket is closed")
        let stranger = try await Self.socket(test, key: "nokey", id: "b")
        #expect(try await stranger.next(PeerJSMessage.self) == .notice(.invalidKey, "Invalid key provided"))
        let outsider = try await Self.socket(test, key: "web", id: "c", origin: "https://elsewhere.example")
        #expect(try await outsider.next(PeerJSMessage.self).type == .error)
        let insider = try await Self.socket(test, key: "web", id: "c", origin: "https://allowed.example")
        #expect(try await insider.next(PeerJSMessage.self).type == .open)
        let anonymous = try await SocketProbe.connect(test.ws + "/peerjs/peerjs?key=demo")
        #expect(try await anonymous.next(PeerJSMessage.self) == .notice(.error, "No id, token, or key supplied to websocket server"))
        let badId = try await Self.socket(test, id: "bad!id")
        #expect(try await badId.next(PeerJSMessage.self) == .notice(.error, "Invalid id provided"))
        // Per-key limit.
        let p1 = try await Self.open(test, id: "p1", key: "pair"), p2 = try await Self.open(test, id: "p2", key: "pair")
        let p3 = try await Self.socket(test, key: "pair", id: "p3")
        #expect(try await p3.next(PeerJSMessage.self) == .notice(.error, "Server has reached its concurrent user limit"))
        for probe in [again, insider, p1, p2] { probe.close() }
        await test.stop()
    }

    @Test func relaysHoldsAndExpires() async throws {
        let clock = ManualACDClock()
        let test = try await Self.start(clock: clock)
        let server = try #require(test.service.peerServer)
        let a = try await Self.open(test, id: "a"), b = try await Self.open(test, id: "b")
        let offer = PeerJSValue.object(["type": .string("media"), "connectionId": .string("mc_1"), "sdp": .object(["type": .string("offer"), "sdp": .string("v=0")])])
        try a.send(PeerJSMessage(type: .offer, src: "spoofed", dst: "b", payload: offer))
        #expect(try await b.next(PeerJSMessage.self) == PeerJSMessage(type: .offer, src: "a", dst: "b", payload: offer), "src is the sender's, whatever it wrote")
        // For a peer not connected yet: held, delivered after its OPEN.
        try a.send(PeerJSMessage(type: .candidate, dst: "c", payload: .object(["candidate": .object([:]), "type": .string("media"), "connectionId": .string("mc_2")])))
        try a.send(PeerJSMessage(type: .heartbeat))
        clock.advance(by: 1)
        server.tick()
        let c = try await Self.socket(test, id: "c")
        #expect(try await c.next(PeerJSMessage.self).type == .open)
        #expect(try await c.next(PeerJSMessage.self).src == "a")
        // For a peer that never comes: EXPIRE to the sender after expireTimeout.
        try a.send(PeerJSMessage(type: .offer, dst: "ghost", payload: offer))
        try await Task.sleep(for: .milliseconds(100))
        clock.advance(by: 4)
        server.tick()
        clock.advance(by: 2)
        server.tick()
        #expect(try await a.next(PeerJSMessage.self) == PeerJSMessage(type: .expire, src: "ghost", dst: "a"))
        // LEAVE to a peer that is connected is relayed; a LEAVE without dst takes the sender off.
        try b.send(PeerJSMessage(type: .leave, dst: "a"))
        #expect(try await a.next(PeerJSMessage.self) == PeerJSMessage(type: .leave, src: "b", dst: "a"))
        try c.send(PeerJSMessage(type: .leave))
        try await c.nextClose()
        #expect(server.registeredPeers(key: "demo") == ["a", "b"])
        for probe in [a, b] { probe.close() }
        await test.stop()
    }

    /// Issue #34: a peer that never read, sent 3,000 x 60 kB OFFERs by another peer on the public
    /// key, grew the service by 187 MiB in 5 s. A sender that floods faster than the service reads
    /// is dropped once 4 MiB wait unprocessed ("incoming backlog"); RSS stays within 32 MiB.
    @Test func aFloodingPeerIsCutWithinItsUnreadBytes() async throws {
        let test = try await Self.start()
        let peers = try await Self.rawPeers(test, ["deaf", "flooder"])
        let before = residentMemoryBytes()
        await Self.send(Self.bigOffer, count: 200, from: peers[1]) // 12 MB as fast as the socket takes them
        try await eventually(.seconds(10), "the flooder cut") { Self.logged(test, "incoming backlog") }
        #expect(await peers[1].readToEnd(seconds: 5).closed, "the service dropped the flooder's connection")
        let growth = residentMemoryBytes() - before
        #expect(growth < 32 << 20, "RSS grew by \(growth >> 20) MiB")
        await test.stop()
    }

    /// The same peer that never reads, sent to at a pace the service keeps up with: its socket is
    /// closed once 1 MiB waits unread ("outgoing backlog"), what follows for it is held within its
    /// bytes, and the rest is refused with EXPIRE; RSS stays within 32 MiB.
    @Test func aPeerThatNeverReadsIsCutAndWhatFollowsIsHeldWithinItsBytes() async throws {
        let test = try await TestService.start { configuration in
            configuration.peerServer = PeerServerConfiguration(keys: [PeerAPIKey(key: "demo")])
            configuration.limits.maxOutgoingWebSocketBytes = 2 << 20
            configuration.limits.maxUnreadIncomingWebSocketBytes = 64 << 20 // the sender is not what is measured here
        }
        let peers = try await Self.rawPeers(test, ["deaf", "sender"])
        let before = residentMemoryBytes()
        await Self.send(Self.bigOffer, count: 200, from: peers[1]) // 12 MB
        try await eventually(.seconds(10), "the deaf peer cut, and its held bytes full") {
            Self.logged(test, "outgoing backlog") && Self.logged(test, "bytes) waiting: sender's OFFER expires")
        }
        let growth = residentMemoryBytes() - before
        #expect(growth < 32 << 20, "RSS grew by \(growth >> 20) MiB")
        await test.stop()
    }

    /// Issue #38 (4): libsoup 3.2 checked the 64 KiB bound on the compressed frame and inflated it
    /// whole (60 MB of one letter came in 58 KB; twenty of them took the server from 39 to 271 MB
    /// and an id 4.4 s to fetch). Twenty compressed frames that inflate to 9.8 MB each now close
    /// their sockets as the bound passes: RSS grows by less than 4 MiB, and ids are served meanwhile.
    @Test func compressedFramesAreBoundedWhileInflating() async throws {
        let test = try await Self.start()
        let port = UInt16(try #require(URL(string: test.base)?.port))
        let bomb = Self.deflateBomb(repeats: 38_000)
        #expect(bomb.count < PeerJSLimits.maxMessageBytes, "the compressed frame passes libsoup's own check: \(bomb.count) bytes")
        var before = residentMemoryBytes()
        var slowest = Duration.zero
        for round in 0..<21 {
            // The first round warms the service up (its first socket, first inflater): measured from the second.
            if round == 1 { before = residentMemoryBytes() }
            let client = try HostileClient(port: port, sendTimeout: 5)
            client.upgrade(path: "/peerjs/peerjs?key=demo&id=bomb\(round)&token=t0k3n", headers: ["Sec-WebSocket-Extensions": "permessage-deflate"])
            #expect(client.sendFrame(payload: bomb, firstByte: 0xC1))
            let asked = ContinuousClock.now
            #expect(try await test.client.get(test.base + "/peerjs/demo/id").status == 200)
            slowest = max(slowest, ContinuousClock.now - asked)
            let reply = await client.readToEnd(seconds: 5)
            #expect(reply.closed && reply.text.contains("Sec-WebSocket-Extensions: permessage-deflate; server_no_context_takeover; client_no_context_takeover"), "\(reply.text.prefix(300))")
        }
        let growth = residentMemoryBytes() - before
        print("deflate bomb: 20 frames of \(bomb.count) bytes (9.8 MB inflated each): RSS +\(growth >> 10) KiB, slowest id \(slowest)")
        // Before: +14 MiB (each frame inflated whole, 9.8 MB). Ids: 5 ms here, 89 ms before; the issue's bar (50 ms) is the benchmark's (Benchmarks/connections/deflate_bomb.py).
        #expect(growth < 4 << 20, "RSS grew by \(growth >> 20) MiB")
        #expect(slowest < .seconds(1), "an id took \(slowest) while the frames came")
        await test.stop()
    }

    /// A raw deflate stream (fixed Huffman codes, RFC 1951 §3.2.6) of "a" then `repeats` copies of
    /// 258 bytes at distance 1: 13 bits for every 258 bytes it inflates to.
    static func deflateBomb(repeats: Int) -> [UInt8] {
        var bytes: [UInt8] = [], current: UInt8 = 0, used = 0
        func bit(_ value: Int) {
            current |= UInt8(value & 1) << used
            used += 1
            if used == 8 { bytes.append(current); current = 0; used = 0 }
        }
        func code(_ value: Int, bits: Int) { for index in (0..<bits).reversed() { bit(value >> index) } }
        bit(1); bit(1); bit(0) // BFINAL, then BTYPE 01 (fixed codes), low bit first
        code(0x30 + 0x61, bits: 8) // the literal "a"
        for _ in 0..<repeats {
            code(0xC0 + 5, bits: 8) // length 258: code 285
            code(0, bits: 5) // distance 1: code 0
        }
        code(0, bits: 7) // end of block
        if used > 0 { bytes.append(current) }
        return bytes
    }

    /// An OFFER of 60 kB for the peer "deaf".
    static let bigOffer: String = (try? ECVJSON.encodeString(PeerJSMessage(type: .offer, dst: "deaf", payload: .object([
        "type": .string("media"), "connectionId": .string("mc_1"),
        "sdp": .object(["type": .string("offer"), "sdp": .string(String(repeating: "s", count: 60_000))])])))) ?? ""

    /// Peers on raw sockets that never read, open with their ids (in order).
    static func rawPeers(_ test: TestService, _ ids: [String]) async throws -> [HostileClient] {
        let port = UInt16(try #require(URL(string: test.base)?.port))
        let clients = try ids.map { id in
            let client = try HostileClient(port: port, sendTimeout: 5)
            client.upgrade(path: "/peerjs/peerjs?key=demo&id=\(id)&token=t0k3n")
            return client
        }
        let server = try #require(test.service.peerServer)
        try await eventually(.seconds(5), "the peers open") { server.registeredPeers(key: "demo") == ids.sorted() }
        return clients
    }

    /// Writes `frame` `count` times on a thread of its own (the writes block while the service
    /// reads), or until a write fails.
    static func send(_ frame: String, count: Int, from client: HostileClient) async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async {
                for _ in 0..<count where client.sendFrame(frame) {}
                done.resume()
            }
        }
    }

    static func logged(_ test: TestService, _ text: String) -> Bool {
        test.service.log.entries.contains { $0.category == .peer && $0.message.contains(text) }
    }

    @Test func silentPeersAreDroppedAndTheirContactsHearLeaveWhenAnnounced() async throws {
        let clock = ManualACDClock()
        let test = try await Self.start(clock: clock) { $0.aliveTimeout = .seconds(60); $0.announcesDroppedPeers = true }
        let server = try #require(test.service.peerServer)
        let a = try await Self.open(test, id: "a"), b = try await Self.open(test, id: "b")
        try a.send(PeerJSMessage(type: .offer, dst: "b", payload: .object(["type": .string("data"), "connectionId": .string("dc_1")])))
        _ = try await b.next(PeerJSMessage.self)
        clock.advance(by: 40)
        try b.send(PeerJSMessage(type: .heartbeat)) // b stays alive, a goes silent
        try await Task.sleep(for: .milliseconds(100))
        clock.advance(by: 30)
        server.tick()
        #expect(try await a.nextClose().reason == "no heartbeat")
        #expect(try await b.next(PeerJSMessage.self) == PeerJSMessage(type: .leave, src: "a", dst: "b"))
        #expect(server.registeredPeers(key: "demo") == ["b"])
        b.close()
        await test.stop()
    }

    /// Issue #38 (1): peerjs-py's first frame, an unknown type, non-JSON, an e-mail as dst, deep
    /// metadata: peerjs-server keeps the socket, so do we. Before, each got ERROR and 1008.
    @Test(arguments: ["not json", #"{"ping":"once"}"#, #"{"type":"OPEN"}"#, #"{"type":"OFFER","payload":{}}"#, #"{"type":"WHAT"}"#,
                      #"{"type":"OFFER","dst":"b","payload":"s"}"#, #"{"type":"CANDIDATE","dst":"bob@example.com","payload":{}}"#,
                      #"{"type":"OFFER","dst":"b","payload":{"metadata":[[[[[[[[[[[[["deep"]]]]]]]]]]]]]}}"#])
    func framesPeerjsServerKeepsNeverCloseTheSocket(_ frame: String) async throws {
        let test = try await Self.start()
        let a = try await Self.open(test, id: "a"), b = try await Self.open(test, id: "b")
        try a.connection.send(text: frame)
        try a.send(PeerJSMessage(type: .leave, dst: "b"))
        var got = try await b.next(PeerJSMessage.self)
        if got.type == .offer { got = try await b.next(PeerJSMessage.self) }
        #expect(got == PeerJSMessage(type: .leave, src: "a", dst: "b"), "a's socket still relays after \(frame)")
        if frame.contains("@") {
            let expire = try await a.next(PeerJSMessage.self)
            #expect(expire.type == .expire, "\(expire)")
        }
        #expect(test.service.peerServer?.registeredPeers(key: "demo") == ["a", "b"])
        for probe in [a, b] { probe.close() }
        await test.stop()
    }

    @Test func configurationProblemsAreErrors() throws {
        var configuration = ReferenceServiceConfiguration()
        for (peer, problem) in [(PeerServerConfiguration(path: "/", keys: [PeerAPIKey(key: "k")]), "must not be /"),
                                (PeerServerConfiguration(keys: []), "at least one API key"),
                                (PeerServerConfiguration(keys: [PeerAPIKey(key: "bad key!")]), "not letters"),
                                (PeerServerConfiguration(path: "/api", keys: [PeerAPIKey(key: "k")]), "ECV endpoint")] {
            configuration.peerServer = peer
            #expect(throws: ACDError.self, "\(problem)") { _ = try ReferenceService(configuration: configuration) }
        }
        #expect(try PeerAPIKey(parsing: "k:a.example,B.example").domains == ["a.example", "b.example"])
        #expect(throws: ReferenceServiceError.self) { _ = try PeerAPIKey(parsing: "k:http://x") }
    }
}
