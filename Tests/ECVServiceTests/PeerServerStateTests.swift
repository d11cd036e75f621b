@testable import ECVService
import ECVProtocol
import Foundation
import Testing

/// The peer server's state machine alone: no sockets, no clock but the `now` each step is given.
struct PeerServerStateTests {
    final class FakeSocket: Sendable {
        let name: String
        init(_ name: String) { self.name = name }
    }

    typealias State = PeerServerState<FakeSocket>

    static func state(_ configure: (inout PeerServerConfiguration) -> Void = { _ in }) -> State {
        var configuration = PeerServerConfiguration(keys: [PeerAPIKey(key: "k")], leaveGrace: .seconds(2))
        configure(&configuration)
        return State(configuration: configuration, iceServers: [])
    }

    /// What the steps sent, as "to: TYPE from" lines, and which sockets they closed.
    static func sent(_ actions: [PeerServerAction<FakeSocket>]) -> [String] {
        actions.compactMap { action in
            switch action {
            case .send(let socket, let message): "\(socket.name): \(message.type.rawValue) \(message.src ?? "-")"
            case .sendText(let socket, let text):
                // Relayed frames are what the server itself encoded: they decode.
                (try? JSONDecoder().decode(PeerJSMessage.self, from: Data(text.utf8))).map { "\(socket.name): \($0.type.rawValue) \($0.src ?? "-")" }
            case .close(let socket, let code, _): "\(socket.name): closed \(code)"
            case .log: nil
            }
        }
    }

    static func offer(to dst: String) -> String {
        #"{"type":"OFFER","dst":"\#(dst)","payload":{"type":"media","connectionId":"mc_1"}}"#
    }

    /// Issue #38 (8): peerjs-server sends no LEAVE for a peer that dropped or went silent, and
    /// PeerJS clients close every connection with a peer on LEAVE: by default neither is told.
    @Test(arguments: [false, true])
    func aDroppedPeerIsRemovedAfterItsGraceAndAnnouncedOnlyWhenConfigured(_ announces: Bool) {
        var state = Self.state { $0.announcesDroppedPeers = announces }
        let a = FakeSocket("a"), b = FakeSocket("b"), c = FakeSocket("c")
        #expect(Self.sent(state.connect(a, key: "k", id: "a", token: "t", origin: nil, now: 0)) == ["a: OPEN -"])
        _ = state.connect(b, key: "k", id: "b", token: "t", origin: nil, now: 0)
        _ = state.connect(c, key: "k", id: "c", token: "t", origin: nil, now: 0)
        #expect(Self.sent(state.receive(Self.offer(to: "b"), from: a, now: 1)) == ["b: OFFER a"])
        #expect(Self.sent(state.receive(Self.offer(to: "c"), from: b, now: 1)) == ["c: OFFER b"])
        // a vanishes (1006): its id waits out the grace, then it is removed.
        #expect(Self.sent(state.socketClosed(a, code: 1006, now: 2)).isEmpty)
        #expect(Self.sent(state.tick(now: 3.9)).isEmpty)
        #expect(Self.sent(state.tick(now: 4)) == (announces ? ["b: LEAVE a"] : []))
        #expect(!state.clients.keys.map(\.id).contains("a"))
        // b disconnects cleanly: forgotten at once, and c hears nothing (its call with b goes on).
        #expect(Self.sent(state.socketClosed(b, code: 1000, now: 5)).isEmpty)
        #expect(state.clients.keys.map(\.id) == ["c"])
        #expect(Self.sent(state.tick(now: 30)).isEmpty)
        #expect(Self.sent(state.tick(now: 60)) == ["c: closed 1000"], "c sent nothing for 60 s")
    }

    /// Issue #38 (8): a peer that leaves on purpose (LEAVE without dst) is announced either way.
    @Test func aPeerThatLeavesIsAnnounced() {
        var state = Self.state()
        let a = FakeSocket("a"), b = FakeSocket("b")
        _ = state.connect(a, key: "k", id: "a", token: "t", origin: nil, now: 0)
        _ = state.connect(b, key: "k", id: "b", token: "t", origin: nil, now: 0)
        _ = state.receive(Self.offer(to: "b"), from: a, now: 1)
        #expect(Self.sent(state.receive(#"{"type":"LEAVE"}"#, from: a, now: 2)) == ["b: LEAVE a", "a: closed 1000"])
    }

    /// Issue #38 (1): frames peerjs-server 1.0.2 ignores or relays keep the socket: no ERROR, no close.
    @Test func framesPeerjsServerKeepsAreIgnoredOrRelayedNeverClosed() {
        var state = Self.state()
        let a = FakeSocket("a"), b = FakeSocket("b")
        _ = state.connect(a, key: "k", id: "a", token: "t", origin: nil, now: 0)
        _ = state.connect(b, key: "k", id: "b", token: "t", origin: nil, now: 0)
        for frame in [#"{"ping":"once"}"#, "not json", "[1,2]", #""text""#, #"{"type":"WHAT"}"#, #"{"type":"OPEN"}"#, #"{"type":7}"#,
                      #"{"type":"OFFER","payload":{}}"#, #"{"type":"ERROR","dst":"b"}"#] {
            #expect(Self.sent(state.receive(frame, from: a, now: 1)).isEmpty, "\(frame)")
        }
        // What it relays, it relays, whatever the payload's shape.
        #expect(Self.sent(state.receive(#"{"type":"OFFER","dst":"b","payload":"s","extra":1}"#, from: a, now: 1)) == ["b: OFFER a"])
        let nested = String(repeating: "[", count: 20) + String(repeating: "]", count: 20)
        #expect(Self.sent(state.receive(#"{"type":"OFFER","dst":"b","payload":{"metadata":\#(nested)}}"#, from: a, now: 1)) == ["b: OFFER a"])
        // Beyond our bounds, or for an id nobody can hold: not delivered, and the sender hears EXPIRE.
        let deep = String(repeating: "[", count: 40) + String(repeating: "]", count: 40)
        #expect(Self.sent(state.receive(#"{"type":"OFFER","dst":"b","payload":{"metadata":\#(deep)}}"#, from: a, now: 1)) == ["a: EXPIRE b"])
        let wide = "[" + Array(repeating: "0", count: 5000).joined(separator: ",") + "]"
        #expect(Self.sent(state.receive(#"{"type":"OFFER","dst":"b","payload":{"metadata":\#(wide)}}"#, from: a, now: 1)) == ["a: EXPIRE b"])
        #expect(Self.sent(state.receive(#"{"type":"CANDIDATE","dst":"bob@example.com","payload":{}}"#, from: a, now: 1))
                == ["a: EXPIRE bob@example.com"])
        #expect(Self.sent(state.receive(#"{"type":"LEAVE","dst":"bob@example.com"}"#, from: a, now: 1)).isEmpty)
        #expect(state.clients.count == 2)
    }

    @Test func aReconnectWithinTheGraceKeepsTheIdAndGetsWhatWasHeld() {
        var state = Self.state()
        let a = FakeSocket("a"), b = FakeSocket("b"), again = FakeSocket("a2"), thief = FakeSocket("x")
        _ = state.connect(a, key: "k", id: "a", token: "t", origin: nil, now: 0)
        _ = state.connect(b, key: "k", id: "b", token: "t", origin: nil, now: 0)
        _ = state.socketClosed(a, code: 1006, now: 1)
        #expect(Self.sent(state.receive(Self.offer(to: "a"), from: b, now: 1.5)).isEmpty, "held for a")
        #expect(Self.sent(state.connect(thief, key: "k", id: "a", token: "other", origin: nil, now: 2)) == ["x: ID-TAKEN -", "x: closed 1008"])
        #expect(Self.sent(state.connect(again, key: "k", id: "a", token: "t", origin: nil, now: 2)) == ["a2: OPEN -", "a2: OFFER b"])
        #expect(Self.sent(state.tick(now: 10)).isEmpty, "no LEAVE, no EXPIRE: a came back")
    }

    @Test func heldMessagesAreBoundedPerPeerAndInAll() {
        var state = Self.state { $0.maxHeldMessagesPerPeer = 2; $0.maxHeldMessages = 3 }
        let a = FakeSocket("a")
        _ = state.connect(a, key: "k", id: "a", token: "t", origin: nil, now: 0)
        #expect(Self.sent(state.receive(Self.offer(to: "x"), from: a, now: 0)).isEmpty)
        #expect(Self.sent(state.receive(Self.offer(to: "x"), from: a, now: 0)).isEmpty)
        #expect(Self.sent(state.receive(Self.offer(to: "x"), from: a, now: 0)) == ["a: EXPIRE x"], "x's share is full")
        #expect(Self.sent(state.receive(Self.offer(to: "y"), from: a, now: 0)).isEmpty)
        #expect(Self.sent(state.receive(Self.offer(to: "z"), from: a, now: 0)) == ["a: EXPIRE z"], "all shares together are full")
        #expect(Set(Self.sent(state.tick(now: 5))) == ["a: EXPIRE x", "a: EXPIRE y"], "one EXPIRE per sender and absent peer")
        #expect(Self.sent(state.receive(Self.offer(to: "z"), from: a, now: 6)).isEmpty, "room again after the expiry")
    }

    /// Issue #34: 4,000 held 60 kB offers were within the count limits (+234 MiB). Bytes are bounded too.
    @Test func heldMessagesAreBoundedInBytesPerPeerAndInAll() {
        let offer = Self.offer(to: "x"), bytes = offer.utf8.count
        var state = Self.state { $0.maxHeldBytesPerPeer = 2 * bytes; $0.maxHeldBytes = 3 * bytes }
        let a = FakeSocket("a")
        _ = state.connect(a, key: "k", id: "a", token: "t", origin: nil, now: 0)
        for _ in 0..<2 { #expect(Self.sent(state.receive(offer, from: a, now: 0)).isEmpty) }
        #expect(Self.sent(state.receive(offer, from: a, now: 0)) == ["a: EXPIRE x"], "x's bytes are full")
        #expect(state.heldBytes == 2 * bytes)
        #expect(Self.sent(state.receive(Self.offer(to: "y"), from: a, now: 0)).isEmpty)
        #expect(Self.sent(state.receive(Self.offer(to: "z"), from: a, now: 0)) == ["a: EXPIRE z"], "all bytes together are full")
        _ = state.tick(now: 5)
        #expect(state.heldBytes == 0)
        // A big frame alone is refused where small ones fit.
        let big = #"{"type":"OFFER","dst":"w","payload":{"sdp":""# + String(repeating: "v", count: 3 * bytes) + #""}}"#
        #expect(Self.sent(state.receive(big, from: a, now: 6)) == ["a: EXPIRE w"])
    }
}
