/// The part of BinaryPack (PeerJS's default data serialization, `peerjs-js-binarypack`) that
/// carries messages: a string is `0xb0|n` (n ≤ 15), `0xd8 u16` or `0xd9 u32` then its UTF-8
/// bytes; bytes are `0xa0|n`, `0xda u16` or `0xdb u32` then the bytes. `BinaryPackValue` reads
/// every value (PeerJS's own maps among them); a message that is a number, array or object is
/// refused by name, never guessed.
enum BinaryPack {
    enum Value: Sendable, Equatable {
        case text(String)
        case bytes([UInt8])
    }

    static func pack(_ value: Value) -> [UInt8] {
        switch value {
        case .text(let text): header(count: text.utf8.count, short: 0xb0, u16: 0xd8, u32: 0xd9) + Array(text.utf8)
        case .bytes(let bytes): header(count: bytes.count, short: 0xa0, u16: 0xda, u32: 0xdb) + bytes
        }
    }

    private static func header(count: Int, short: UInt8, u16: UInt8, u32: UInt8) -> [UInt8] {
        if count <= 0x0f { return [short + UInt8(count)] }
        if count <= 0xffff { return [u16, UInt8(count >> 8), UInt8(count & 0xff)] }
        return [u32, UInt8((count >> 24) & 0xff), UInt8((count >> 16) & 0xff), UInt8((count >> 8) & 0xff), UInt8(count & 0xff)]
    }

    enum UnpackError: Error, Equatable, CustomStringConvertible {
        case empty
        case truncated(needed: Int, have: Int)
        case trailingBytes(Int)
        case unsupported(type: UInt8)
        case invalidUTF8
        case tooDeep(Int)

        var description: String {
            switch self {
            case .empty: "an empty BinaryPack message"
            case .truncated(let needed, let have): "a BinaryPack value of \(needed) bytes in \(have)"
            case .trailingBytes(let count): "\(count) bytes after the BinaryPack value"
            case .unsupported(let type): "BinaryPack type 0x\(String(type, radix: 16)) (only strings and bytes are read)"
            case .invalidUTF8: "a BinaryPack string that is not UTF-8"
            case .tooDeep(let depth): "BinaryPack values nested deeper than \(depth)"
            }
        }
    }
}
