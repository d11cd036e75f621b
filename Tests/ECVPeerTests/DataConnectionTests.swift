import ECVPeer
import ECVProtocol
import ECVService
import ECVTestSupport
import Foundation
import Testing

@Suite(.serialized) struct DataConnectionTests {
    @Test(arguments: [PeerJSSerialization.binary, .raw, .json])
    func textAndBytesBothWays(_ serialization: PeerJSSerialization) async throws {
        let backend = try await PeerBackend.start()
        let (alice, _) = try await backend.openPeer(id: "alice")
        let (bob, bobEvents) = try await backend.openPeer(id: "bob")
        let outgoing = alice.connect(peerId: "bob", options: ConnectOption(serialization: serialization, metadata: .string("hello")))
        let outgoingEvents = Events(outgoing.events())
        let incoming = try #require(try await bobEvents.first("CONNECTION") { $0.dataConnection != nil }.dataConnection)
        let incomingEvents = Events(incoming.events())
        #expect(incoming.peer == "alice" && incoming.serialization == serialization && incoming.metadata == .string("hello"))
        #expect(incoming.label == outgoing.label)
        try await outgoingEvents.first("OPEN at alice") { $0 == .open }
        try await incomingEvents.first("OPEN at bob") { $0 == .open }
        let long = String(repeating: "ü", count: 300) // more than 15 and 255 bytes: BinaryPack's longer headers
        try outgoing.send("hello bob")
        try outgoing.send(long)
        try incoming.send("hello alice")
        if serialization != .json {
            try outgoing.send(data: [0, 1, 2, 255])
            try incoming.send(data: Array(repeating: 7, count: 1000))
        } else {
            #expect(throws: PeerError.self) { try outgoing.send(data: [1]) }
        }
        try await incomingEvents.first("text at bob") { $0 == .data(.text("hello bob")) }
        try await incomingEvents.first("long text at bob") { $0 == .data(.text(long)) }
        try await outgoingEvents.first("text at alice") { $0 == .data(.text("hello alice")) }
        if serialization != .json {
            try await incomingEvents.first("bytes at bob") { $0 == .data(.binary([0, 1, 2, 255])) }
            try await outgoingEvents.first("bytes at alice") { $0 == .data(.binary(Array(repeating: 7, count: 1000))) }
        }
        switch serialization {
        case .json: #expect(throws: PeerError.self) { try outgoing.send(String(repeating: "x", count: 20_000)) }
        case .binary:
            // Issue #38 (6): over 16 300 bytes a message goes in PeerJS's chunks, both ways.
            let big = String(repeating: "x", count: 100_000), bytes = (0..<100_000).map { UInt8(truncatingIfNeeded: $0) }
            try outgoing.send(big)
            try incoming.send(data: bytes)
            try await incomingEvents.first("100 KB of text at bob") { $0 == .data(.text(big)) }
            try await outgoingEvents.first("100 KB of bytes at alice") { $0 == .data(.binary(bytes)) }
        default: break
        }
        // Binary and JSON connections say `__peerData close` in-band before closing; a raw one has
        // the data channel's closing alone. The side that did not open the channel closes here.
        await incoming.closeAndWait()
        try await outgoingEvents.first("CLOSE at alice", timeout: .seconds(8)) { $0 == .close }
        #expect(throws: PeerError.self) { try outgoing.send("too late") }
        #expect(throws: PeerError.self) { try incoming.send("too late") }
    }

    @Test func aRawConnectionClosedByItsOpenerClosesOnTheOtherSide() async throws {
        let backend = try await PeerBackend.start()
        let (alice, _) = try await backend.openPeer(id: "opener")
        let (bob, bobEvents) = try await backend.openPeer(id: "taker")
        let outgoing = alice.connect(peerId: "taker", options: ConnectOption(serialization: .raw))
        let incoming = try #require(try await bobEvents.first("CONNECTION") { $0.dataConnection != nil }.dataConnection)
        let incomingEvents = Events(incoming.events())
        try await incomingEvents.first("OPEN at the taker") { $0 == .open }
        try await eventually(.seconds(10), "open at the opener") { outgoing.isOpen }
        await outgoing.closeAndWait()
        try await incomingEvents.first("CLOSE at the taker", timeout: .seconds(8)) { $0 == .close }
        await alice.destroy()
        await bob.destroy()
        await backend.stop()
    }

    /// Issue #38 (7): `none`, an older name of `raw` that PeerJS 1.5 cannot create and throws on,
    /// went on the wire as "none"; an offer naming a serialization PeerJS does not define was
    /// refused and never answered. Now `none` goes as `raw`, and the unknown name is taken as raw.
    @Test func noneGoesOnTheWireAsRawAndAnUnknownSerializationIsTakenAsRaw() async throws {
        let offer = PeerJSValue.object(["sdp": .object(["type": .string("offer"), "sdp": .string("v=0\r\n")]), "type": .string("data"),
                                        "connectionId": .string("dc_msgpack"), "serialization": .string("msgpack")])
        #expect(try PeerJSDescriptionPayload(offer).serialization == .raw)
        let backend = try await PeerBackend.start()
        let (alice, _) = try await backend.openPeer(id: "old-namer")
        let (bob, bobEvents) = try await backend.openPeer(id: "reader")
        let outgoing = alice.connect(peerId: "reader", options: ConnectOption(serialization: PeerJSSerialization.none))
        let outgoingEvents = Events(outgoing.events())
        let incoming = try #require(try await bobEvents.first("CONNECTION") { $0.dataConnection != nil }.dataConnection)
        #expect(incoming.serialization == .raw, "the offer said \(incoming.serialization.rawValue)")
        let incomingEvents = Events(incoming.events())
        try await outgoingEvents.first("OPEN at the opener") { $0 == .open }
        try outgoing.send("as it is")
        try await incomingEvents.first("the text, raw") { $0 == .data(.text("as it is")) }
        await alice.destroy()
        await bob.destroy()
        await backend.stop()
    }
}
