/// Any BinaryPack value (`peerjs-js-binarypack`, PeerJS's default serialization), for the
/// messages PeerJS itself sends inside a data connection: its close notice
/// `{"__peerData":{"type":"close"}}` and the chunks of a large message
/// `{"__peerData":id,"n":i,"total":t,"data":bytes}`. Read within bounds: a nesting depth, and no
/// container announcing more elements than bytes remain.
indirect enum BinaryPackValue: Equatable, Sendable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case text(String)
    case bytes([UInt8])
    case array([BinaryPackValue])
    /// Keys in the order they came (BinaryPack keys may be any value; PeerJS's are strings).
    case map([Pair])

    struct Pair: Equatable, Sendable {
        var key: BinaryPackValue
        var value: BinaryPackValue
    }

    static let maxDepth = 16

    subscript(key: String) -> BinaryPackValue? {
        guard case .map(let pairs) = self else { return nil }
        return pairs.first { $0.key == .text(key) }?.value
    }

    var intValue: Int? {
        if case .int(let value) = self, let int = Int(exactly: value) { int } else { nil }
    }

    // MARK: Reading

    static func unpack(_ data: [UInt8]) throws(BinaryPack.UnpackError) -> BinaryPackValue {
        var reader = Reader(bytes: data)
        let value = try reader.value(depth: 0)
        guard reader.offset == data.count else { throw .trailingBytes(data.count - reader.offset) }
        return value
    }

    private struct Reader {
        let bytes: [UInt8]
        var offset = 0

        mutating func take(_ count: Int) throws(BinaryPack.UnpackError) -> ArraySlice<UInt8> {
            guard count >= 0, bytes.count - offset >= count else { throw .truncated(needed: offset + count, have: bytes.count) }
            defer { offset += count }
            return bytes[offset..<(offset + count)]
        }

        mutating func unsigned(_ size: Int) throws(BinaryPack.UnpackError) -> UInt64 {
            try take(size).reduce(0) { $0 << 8 | UInt64($1) }
        }

        mutating func length(_ size: Int) throws(BinaryPack.UnpackError) -> Int {
            let value = try unsigned(size)
            guard value <= UInt64(bytes.count - offset) else { throw .truncated(needed: offset + Int(clamping: value), have: bytes.count) }
            return Int(value)
        }

        mutating func value(depth: Int) throws(BinaryPack.UnpackError) -> BinaryPackValue {
            guard depth <= BinaryPackValue.maxDepth else { throw .tooDeep(BinaryPackValue.maxDepth) }
            let type = try take(1).first ?? 0
            switch type {
            case 0x00...0x7f: return .int(Int64(type))
            case 0xe0...0xff: return .int(Int64(Int8(bitPattern: type)))
            case 0x80...0x8f: return try map(count: Int(type & 0x0f), depth: depth)
            case 0x90...0x9f: return try array(count: Int(type & 0x0f), depth: depth)
            case 0xa0...0xaf: return .bytes(Array(try take(Int(type & 0x0f))))
            case 0xb0...0xbf: return try text(Int(type & 0x0f))
            case 0xc0, 0xc1, 0xd4...0xd7: return .null // null; binarypack writes undefined as 0xc0 and reads 0xc1, 0xd4–0xd7 as undefined
            case 0xc2: return .bool(false)
            case 0xc3: return .bool(true)
            case 0xca: return .double(Double(Float(bitPattern: UInt32(try unsigned(4)))))
            case 0xcb: return .double(Double(bitPattern: try unsigned(8)))
            case 0xcc: return .int(Int64(try unsigned(1)))
            case 0xcd: return .int(Int64(try unsigned(2)))
            case 0xce: return .int(Int64(try unsigned(4)))
            case 0xcf:
                let value = try unsigned(8)
                guard let int = Int64(exactly: value) else { throw .unsupported(type: type) }
                return .int(int)
            case 0xd0: return .int(Int64(Int8(truncatingIfNeeded: try unsigned(1))))
            case 0xd1: return .int(Int64(Int16(truncatingIfNeeded: try unsigned(2))))
            case 0xd2: return .int(Int64(Int32(truncatingIfNeeded: try unsigned(4))))
            case 0xd3: return .int(Int64(bitPattern: try unsigned(8)))
            case 0xd8: return try text(try length(2))
            case 0xd9: return try text(try length(4))
            case 0xda: return .bytes(Array(try take(try length(2))))
            case 0xdb: return .bytes(Array(try take(try length(4))))
            case 0xdc: return try array(count: try length(2), depth: depth)
            case 0xdd: return try array(count: try length(4), depth: depth)
            case 0xde: return try map(count: try length(2), depth: depth)
            case 0xdf: return try map(count: try length(4), depth: depth)
            default: throw .unsupported(type: type)
            }
        }

        mutating func text(_ count: Int) throws(BinaryPack.UnpackError) -> BinaryPackValue {
            guard let text = String(validating: try take(count), as: UTF8.self) else { throw .invalidUTF8 }
            return .text(text)
        }

        // Every element takes at least one byte: `length` has bounded the count by what remains.
        mutating func array(count: Int, depth: Int) throws(BinaryPack.UnpackError) -> BinaryPackValue {
            var values: [BinaryPackValue] = []
            values.reserveCapacity(min(count, 1024))
            for _ in 0..<count { values.append(try value(depth: depth + 1)) }
            return .array(values)
        }

        mutating func map(count: Int, depth: Int) throws(BinaryPack.UnpackError) -> BinaryPackValue {
            var pairs: [Pair] = []
            pairs.reserveCapacity(min(count, 1024))
            for _ in 0..<count { pairs.append(Pair(key: try value(depth: depth + 1), value: try value(depth: depth + 1))) }
            return .map(pairs)
        }
    }

    // MARK: Writing

    /// The value as binarypack writes it (integers in the smallest form, strings by UTF-8 length).
    func packed() -> [UInt8] {
        var out: [UInt8] = []
        write(to: &out)
        return out
    }

    private func write(to out: inout [UInt8]) {
        switch self {
        case .null: out.append(0xc0)
        case .bool(let value): out.append(value ? 0xc3 : 0xc2)
        case .int(let value): Self.writeInteger(value, to: &out)
        case .double(let value): out.append(0xcb); Self.append(value.bitPattern, bytes: 8, to: &out)
        case .text(let text): out += BinaryPack.pack(.text(text))
        case .bytes(let bytes): out += BinaryPack.pack(.bytes(bytes))
        case .array(let values):
            Self.header(values.count, fix: 0x90, u16: 0xdc, u32: 0xdd, to: &out)
            for value in values { value.write(to: &out) }
        case .map(let pairs):
            Self.header(pairs.count, fix: 0x80, u16: 0xde, u32: 0xdf, to: &out)
            for pair in pairs { pair.key.write(to: &out); pair.value.write(to: &out) }
        }
    }

    private static func writeInteger(_ value: Int64, to out: inout [UInt8]) {
        switch value {
        case -0x20...0x7f: out.append(UInt8(truncatingIfNeeded: value))
        case 0...0xff: out.append(0xcc); append(UInt64(value), bytes: 1, to: &out)
        case -0x80...0x7f: out.append(0xd0); append(UInt64(bitPattern: value), bytes: 1, to: &out)
        case 0...0xffff: out.append(0xcd); append(UInt64(value), bytes: 2, to: &out)
        case -0x8000...0x7fff: out.append(0xd1); append(UInt64(bitPattern: value), bytes: 2, to: &out)
        case 0...0xffff_ffff: out.append(0xce); append(UInt64(value), bytes: 4, to: &out)
        case -0x8000_0000...0x7fff_ffff: out.append(0xd2); append(UInt64(bitPattern: value), bytes: 4, to: &out)
        default: out.append(0xd3); append(UInt64(bitPattern: value), bytes: 8, to: &out)
        }
    }

    private static func header(_ count: Int, fix: UInt8, u16: UInt8, u32: UInt8, to out: inout [UInt8]) {
        if count <= 0x0f { out.append(fix | UInt8(count)) } else if count <= 0xffff { out.append(u16); append(UInt64(count), bytes: 2, to: &out) } else {
            out.append(u32); append(UInt64(count), bytes: 4, to: &out)
        }
    }

    private static func append(_ value: UInt64, bytes: Int, to out: inout [UInt8]) {
        for shift in stride(from: (bytes - 1) * 8, through: 0, by: -8) { out.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
    }
}
