/// The part of BinaryPack (PeerJS's default data serialization, `peerjs-js-binarypack`) that
/// carries strings and bytes: a string is `0xb0|n` (n ≤ 15), `0xd8 u16` or `0xd9 u32` then its
/// UTF-8 bytes; bytes are `0xa0|n`, `0xda u16` or `0xdb u32` then the bytes. Other values (numbers,
/// arrays, objects) are refused by name, never guessed.
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

        var description: String {
            switch self {
            case .empty: "an empty BinaryPack message"
            case .truncated(let needed, let have): "a BinaryPack value of \(needed) bytes in \(have)"
            case .trailingBytes(let count): "\(count) bytes after the BinaryPack value"
            case .unsupported(let type): "BinaryPack type 0x\(String(type, radix: 16)) (only strings and bytes are read)"
            case .invalidUTF8: "a BinaryPack string that is not UTF-8"
            }
        }
    }

    static func unpack(_ data: [UInt8]) throws(UnpackError) -> Value {
        guard let type = data.first else { throw .empty }
        let isText: Bool
        let length: Int, start: Int
        switch type {
        case 0xa0...0xaf: (isText, length, start) = (false, Int(type & 0x0f), 1)
        case 0xb0...0xbf: (isText, length, start) = (true, Int(type & 0x0f), 1)
        case 0xd8, 0xda:
            guard data.count >= 3 else { throw .truncated(needed: 3, have: data.count) }
            (isText, length, start) = (type == 0xd8, Int(data[1]) << 8 | Int(data[2]), 3)
        case 0xd9, 0xdb:
            guard data.count >= 5 else { throw .truncated(needed: 5, have: data.count) }
            (isText, length, start) = (type == 0xd9, Int(data[1]) << 24 | Int(data[2]) << 16 | Int(data[3]) << 8 | Int(data[4]), 5)
        default:
            throw .unsupported(type: type)
        }
        guard data.count >= start + length else { throw .truncated(needed: start + length, have: data.count) }
        guard data.count == start + length else { throw .trailingBytes(data.count - start - length) }
        let body = Array(data[start..<(start + length)])
        guard isText else { return .bytes(body) }
        guard let text = String(validating: body, as: UTF8.self) else { throw .invalidUTF8 }
        return .text(text)
    }
}
