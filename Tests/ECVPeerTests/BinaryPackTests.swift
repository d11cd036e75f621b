@testable import ECVPeer
import Testing

/// BinaryPack's values, as peerjs-js-binarypack writes them.
struct BinaryPackTests {
    @Test(arguments: [0, 15, 16, 255, 65_535, 65_536])
    func stringsAndBytesRoundTripWithEachHeader(_ count: Int) throws {
        let text = String(repeating: "a", count: count), bytes = [UInt8](repeating: 9, count: count)
        let packedText = BinaryPack.pack(.text(text)), packedBytes = BinaryPack.pack(.bytes(bytes))
        let header = count <= 15 ? 1 : count <= 65_535 ? 3 : 5
        #expect(packedText.count == count + header && packedBytes.count == count + header)
        #expect(packedText.first == (count <= 15 ? 0xb0 + UInt8(count) : count <= 65_535 ? 0xd8 : 0xd9))
        #expect(packedBytes.first == (count <= 15 ? 0xa0 + UInt8(count) : count <= 65_535 ? 0xda : 0xdb))
        #expect(try BinaryPackValue.unpack(packedText) == .text(text))
        #expect(try BinaryPackValue.unpack(packedBytes) == .bytes(bytes))
    }

    @Test func otherValuesAndDamageAreRefusedByName() {
        #expect(throws: BinaryPack.UnpackError.truncated(needed: 1, have: 0)) { try BinaryPackValue.unpack([]) }
        #expect(throws: BinaryPack.UnpackError.truncated(needed: 4, have: 2)) { try BinaryPackValue.unpack([0xb3, 0x61]) }
        #expect(throws: BinaryPack.UnpackError.trailingBytes(1)) { try BinaryPackValue.unpack([0xb1, 0x61, 0x62]) }
        #expect(throws: BinaryPack.UnpackError.invalidUTF8) { try BinaryPackValue.unpack([0xb1, 0xff]) }
        #expect(throws: BinaryPack.UnpackError.unsupported(type: 0xc4)) { try BinaryPackValue.unpack([0xc4]) }
        // An array announcing more elements than bytes remain is refused before anything is made for them.
        #expect(throws: BinaryPack.UnpackError.self) { try BinaryPackValue.unpack([0xdd, 0xff, 0xff, 0xff, 0xff]) }
        #expect(throws: BinaryPack.UnpackError.tooDeep(BinaryPackValue.maxDepth)) { try BinaryPackValue.unpack([UInt8](repeating: 0x91, count: 40) + [0xc0]) }
        #expect(BinaryPack.pack(.text("ü")) == [0xb2, 0xc3, 0xbc], "the length counts UTF-8 bytes")
    }

    @Test func peerJSCloseNoticeAndNumbersReadAsBinarypackWritesThem() throws {
        #expect(try BinaryPackValue.unpack(DataSerialization.packedCloseNotice)["__peerData"]?["type"] == .text("close"))
        for (value, packed) in [(Int64(5), [UInt8(0x05)]), (-3, [0xfd]), (200, [0xcc, 0xc8]), (-100, [0xd0, 0x9c]), (40_000, [0xcd, 0x9c, 0x40]),
                                (-40_000, [0xd2, 0xff, 0xff, 0x63, 0xc0]), (70_000, [0xce, 0x00, 0x01, 0x11, 0x70])] as [(Int64, [UInt8])] {
            #expect(BinaryPackValue.int(value).packed() == packed, "\(value)")
            #expect(try BinaryPackValue.unpack(packed) == .int(value))
        }
        let map = BinaryPackValue.map([.init(key: .text("a"), value: .array([.null, .bool(true), .double(1.5)]))])
        #expect(try BinaryPackValue.unpack(map.packed()) == map)
    }
}
