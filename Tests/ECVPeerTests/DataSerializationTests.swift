@testable import ECVPeer
import ECVProtocol
import Testing

/// Data as every PeerJS version writes and reads it (issue #38, items 5 and 6), frame by frame.
struct DataSerializationTests {
    static func wire(_ serialization: PeerJSSerialization) -> DataSerialization {
        DataSerialization(serialization, maxMessageBytes: DataConnection.maxMessageBytes)
    }

    /// Item 6: a 100 KB message went nowhere (refused over 16 300 bytes; PeerJS's chunks read as
    /// an unreadable map). It goes as PeerJS's chunks and is read back from them, in any order.
    @Test func largeBinaryPackMessagesGoAndComeInPeerJSChunks() throws {
        var sender = Self.wire(.binary), receiver = Self.wire(.binary)
        let bytes = (0..<100_000).map { UInt8(truncatingIfNeeded: $0 * 7) }
        let frames = try sender.frames(for: .binary(bytes))
        #expect(frames.count == 7, "100 005 packed bytes in slices of 16 300")
        // The first chunk exactly as PeerJS packs {__peerData: 0, n: 0, data: <16300 bytes>, total: 7}.
        let first = try #require(frames.first?.frameBytes)
        #expect(Array(first.prefix(31)) == [0x84, 0xba] + Array("__peerData".utf8) + [0x00, 0xb1, 0x6e, 0x00, 0xb4] + Array("data".utf8) + [0xda, 0x3f, 0xac]
            + [0xdb, 0x00, 0x01, 0x86, 0xa0, 0x00, 0x07])
        #expect(Array(first.suffix(7)) == [0xb5] + Array("total".utf8) + [0x07])
        for frame in frames.dropLast().reversed() { #expect(receiver.read(frame) == .pending) }
        #expect(receiver.read(try #require(frames.last)) == .message(.binary(bytes)))
        // The next large message has the next id; text chunks the same way.
        let text = String(repeating: "ü", count: 30_000)
        let textFrames = try sender.frames(for: .text(text))
        #expect(try BinaryPackValue.unpack(textFrames[0].frameBytes)["__peerData"] == .int(1))
        for frame in textFrames.dropLast() { #expect(receiver.read(frame) == .pending) }
        #expect(receiver.read(try #require(textFrames.last)) == .message(.text(text)))
        // Small ones go whole.
        #expect(try sender.frames(for: .text("hi")) == [.binary([0xb2, 0x68, 0x69])])
    }

    @Test func chunksOutOfBoundsAreRefusedAndDropTheirMessage() throws {
        var small = DataSerialization(.binary, maxMessageBytes: 40_000)
        #expect(throws: DataSerialization.WriteError.tooBig(size: 50_003, limit: 40_000)) { try small.frames(for: .binary(Array(repeating: 1, count: 50_000))) }
        var sender = Self.wire(.binary)
        let frames = try sender.frames(for: .binary(Array(repeating: 1, count: 50_000)))
        let results = frames.map { small.read($0) }
        #expect(results.contains(.unreadable("a chunked message over 40000 bytes")), "\(results)")
        #expect(!results.contains { if case .message = $0 { true } else { false } }, "a message over the bound was put together")
        func chunk(id: Int, n: Int, total: Int) -> DataMessage {
            .binary(BinaryPackValue.map([.init(key: .text("__peerData"), value: .int(Int64(id))), .init(key: .text("n"), value: .int(Int64(n))),
                                         .init(key: .text("data"), value: .bytes([1])), .init(key: .text("total"), value: .int(Int64(total)))]).packed())
        }
        var receiver = Self.wire(.binary)
        #expect(receiver.read(chunk(id: 0, n: 3, total: 3)) == .unreadable("chunk 3 of 3"))
        for id in 0..<4 { #expect(receiver.read(chunk(id: id, n: 0, total: 2)) == .pending) }
        #expect(receiver.read(chunk(id: 9, n: 0, total: 2)) == .unreadable("more than 4 chunked messages under way at once"))
        #expect(receiver.read(chunk(id: 2, n: 1, total: 2)) == .unreadable("a chunked message: 1 bytes after the BinaryPack value"),
                "the two chunks join to [1, 1]: a positive fixnum and a trailing byte")
    }

    /// Item 5: PeerJS 1.5 sends JSON in binary frames and reads only those; PeerJS ≤ 1.4 and the
    /// Python ports send text frames and cannot read binary ones. We answer in the peer's kind.
    @Test func jsonGoesInTheFrameTypeThePeerUses() throws {
        var modern = Self.wire(.json)
        #expect(try modern.frames(for: .text("hi")) == [.binary(Array(#""hi""#.utf8))], "PeerJS 1.5's kind until the peer shows its own")
        #expect(modern.read(.binary(Array(#""from 1.5""#.utf8))) == .message(.text("from 1.5")))
        #expect(try modern.frames(for: .text("hi")) == [.binary(Array(#""hi""#.utf8))])
        var older = Self.wire(.json)
        #expect(older.read(.text(#"{"a":1}"#)) == .message(.text(#"{"a":1}"#)), "JSON that is not a string arrives as its text")
        #expect(try older.frames(for: .text("hi")) == [.text(#""hi""#)])
        #expect(older.closeNotice == .text(#"{"__peerData":{"type":"close"}}"#))
        #expect(older.read(.text(#"{"__peerData":{"type":"close"}}"#)) == .close)
        #expect(throws: DataSerialization.WriteError.self) { try older.frames(for: .text(String(repeating: "x", count: 16_300))) }
        #expect(throws: DataSerialization.WriteError.self) { try older.frames(for: .binary([1])) }
    }

    @Test func rawCarriesFramesAsTheyAreAndPeerJSClosesAreRead() throws {
        var raw = Self.wire(.raw)
        #expect(try raw.frames(for: .text("t")) == [.text("t")])
        #expect(try raw.frames(for: .binary([1, 2])) == [.binary([1, 2])])
        #expect(raw.read(.binary(DataSerialization.packedCloseNotice)) == .message(.binary(DataSerialization.packedCloseNotice)), "raw has no close notice")
        #expect(raw.closeNotice == nil)
        var binary = Self.wire(.binary)
        #expect(binary.read(.binary(DataSerialization.packedCloseNotice)) == .close)
        #expect(binary.read(.binary([0x93, 1, 2, 3])) == .unreadable("a BinaryPack array (only strings and bytes are read)"))
    }
}
