@testable import ECVPeer
import Testing

/// BinaryPack's strings and binaries, as peerjs-js-binarypack writes them.
struct BinaryPackTests {
    @Test(arguments: [0, 15, 16, 255, 65_535, 65_536])
    func stringsAndBytesRoundTripWithEachHeader(_ count: Int) throws {
        let text = String(repeating: "a", count: count), bytes = [UInt8](repeating: 9, count: count)
        let packedText = BinaryPack.pack(.text(text)), packedBytes = BinaryPack.pack(.bytes(bytes))
        let header = count <= 15 ? 1 : count <= 65_535 ? 3 : 5
        #expect(packedText.count == count + header && packedBytes.count == count + header)
        #expect(packedText.first == (count <= 15 ? 0xb0 + UInt8(count) : count <= 65_535 ? 0xd8 : 0xd9))
        #expect(packedBytes.first == (count <= 15 ? 0xa0 + UInt8(count) : count <= 65_535 ? 0xda : 0xdb))
        #expect(try BinaryPack.unpack(packedText) == .text(text))
        #expect(try BinaryPack.unpack(packedBytes) == .bytes(bytes))
    }

    @Test func otherValuesAndDamageAreRefusedByName() {
        #expect(throws: BinaryPack.UnpackError.empty) { try BinaryPack.unpack([]) }
        #expect(throws: BinaryPack.UnpackError.unsupported(type: 0x81)) { try BinaryPack.unpack(DataConnection.packedCloseNotice) }
        #expect(throws: BinaryPack.UnpackError.truncated(needed: 4, have: 2)) { try BinaryPack.unpack([0xb3, 0x61]) }
        #expect(throws: BinaryPack.UnpackError.trailingBytes(1)) { try BinaryPack.unpack([0xb1, 0x61, 0x62]) }
        #expect(throws: BinaryPack.UnpackError.invalidUTF8) { try BinaryPack.unpack([0xb1, 0xff]) }
        #expect(BinaryPack.pack(.text("ü")) == [0xb2, 0xc3, 0xbc], "the length counts UTF-8 bytes")
    }
}
