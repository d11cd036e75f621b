import ECVProtocol
import Foundation

extension DataMessage {
    /// The frame's bytes (a text's in UTF-8).
    var frameBytes: [UInt8] {
        switch self {
        case .text(let text): Array(text.utf8)
        case .binary(let bytes): bytes
        }
    }
}

/// How one data connection writes and reads its messages, as every PeerJS version does for its
/// `serialization` (docs/protocol.md §8.7):
/// - `binary` (and `binary-utf8`): BinaryPack strings and bytes; a packed message over 16 300
///   bytes in chunks (`BinaryPackChunking`), both ways, up to `maxMessageBytes`.
/// - `json`: JSON text. PeerJS 1.5 sends it in binary frames and reads only those; PeerJS ≤ 1.4
///   (and the Python ports) send text frames and cannot read binary ones. So we write binary
///   frames until the peer's first JSON arrives in a text frame, then text frames.
/// - `raw` (and its old name `none`): text and bytes as they are.
/// PeerJS's own close notice `{"__peerData":{"type":"close"}}` is read in `binary` and `json`.
struct DataSerialization: Sendable {
    /// What a frame from the peer turned out to be.
    enum Incoming: Equatable, Sendable {
        case message(DataMessage)
        /// The peer closed the connection (PeerJS's close notice).
        case close
        /// A chunk of a message still under way.
        case pending
        case unreadable(String)
    }

    let serialization: PeerJSSerialization
    /// The largest message, in bytes as encoded: PeerJS itself sends any size on `binary`
    /// connections (chunked); ours are bounded so a peer cannot grow us without limit.
    let maxMessageBytes: Int
    /// JSON in text frames: the peer sent its JSON that way (PeerJS ≤ 1.4).
    private(set) var jsonInTextFrames = false
    private var nextChunkId = 0
    private var reassembly: BinaryPackChunking.Reassembly

    init(_ serialization: PeerJSSerialization, maxMessageBytes: Int) {
        self.serialization = serialization
        self.maxMessageBytes = maxMessageBytes
        reassembly = BinaryPackChunking.Reassembly(maxMessageBytes: maxMessageBytes)
    }

    var isBinaryPack: Bool { serialization == .binary || serialization == .binaryUTF8 }

    // MARK: Writing

    enum WriteError: Error, Equatable {
        case tooBig(size: Int, limit: Int)
        case notJSON(String)
    }

    /// The frames for `message` as they go on the channel: one, or the chunks of a large BinaryPack message.
    mutating func frames(for message: DataMessage) throws(WriteError) -> [DataMessage] {
        switch serialization {
        case .binary, .binaryUTF8:
            let packed = switch message {
            case .text(let text): BinaryPack.pack(.text(text))
            case .binary(let bytes): BinaryPack.pack(.bytes(bytes))
            }
            guard packed.count <= maxMessageBytes else { throw .tooBig(size: packed.count, limit: maxMessageBytes) }
            let frames = BinaryPackChunking.frames(for: packed, id: nextChunkId)
            if frames.count > 1 { nextChunkId += 1 }
            return frames.map(DataMessage.binary)
        case .json:
            guard case .text(let text) = message else {
                throw .notJSON("a json data connection carries JSON, not bytes; use binary or raw serialization")
            }
            // A JSON string, as JSON.stringify writes it (only an invalid string fails to encode).
            guard let encoded = try? ECVJSON.encode([text]) else { throw .notJSON("the text does not encode as JSON") }
            let json = Array(encoded.dropFirst().dropLast())
            // PeerJS refuses JSON messages of chunkedMTU bytes and more ("Message too big for JSON channel").
            guard json.count < BinaryPackChunking.chunkedMTU else { throw .tooBig(size: json.count, limit: BinaryPackChunking.chunkedMTU - 1) }
            return [jsonInTextFrames ? .text(String(decoding: json, as: UTF8.self)) : .binary(json)]
        case .raw, .none:
            guard message.frameBytes.count <= maxMessageBytes else { throw .tooBig(size: message.frameBytes.count, limit: maxMessageBytes) }
            return [message]
        }
    }

    /// PeerJS's close notice in this serialization; raw connections have none.
    var closeNotice: DataMessage? {
        switch serialization {
        case .binary, .binaryUTF8: .binary(Self.packedCloseNotice)
        case .json:
            jsonInTextFrames ? .text(Self.jsonCloseNotice) : .binary(Array(Self.jsonCloseNotice.utf8))
        case .raw, .none: nil
        }
    }

    static let jsonCloseNotice = #"{"__peerData":{"type":"close"}}"#
    /// BinaryPack of `{"__peerData":{"type":"close"}}`: fixmap(1), "__peerData", fixmap(1), "type", "close".
    static let packedCloseNotice: [UInt8] = [0x81, 0xba] + Array("__peerData".utf8) + [0x81, 0xb4] + Array("type".utf8) + [0xb5] + Array("close".utf8)

    // MARK: Reading

    /// A frame from the peer (a text or binary frame as it came), decoded as the serialization says.
    mutating func read(_ frame: DataMessage) -> Incoming {
        switch serialization {
        case .binary, .binaryUTF8: return readBinaryPack(frame)
        case .json: return readJSON(frame)
        case .raw, .none: return .message(frame)
        }
    }

    private mutating func readBinaryPack(_ frame: DataMessage) -> Incoming {
        // PeerJS sends BinaryPack in binary frames; text here is a peer that does not pack strings.
        guard case .binary(let bytes) = frame else { return .message(.text(frameText(frame))) }
        let value: BinaryPackValue
        do { value = try BinaryPackValue.unpack(bytes) } catch { return .unreadable("\(error)") }
        return interpret(value)
    }

    private mutating func interpret(_ value: BinaryPackValue) -> Incoming {
        switch value {
        case .text(let text): return .message(.text(text))
        case .bytes(let bytes): return .message(.binary(bytes))
        case .map:
            if value["__peerData"]?["type"] == .text("close") { return .close }
            if let chunk = BinaryPackChunking.Chunk(value) {
                let whole: [UInt8]?
                do { whole = try reassembly.add(chunk) } catch { return .unreadable("\(error)") }
                guard let whole else { return .pending }
                let inner: BinaryPackValue
                do { inner = try BinaryPackValue.unpack(whole) } catch { return .unreadable("a chunked message: \(error)") }
                // A chunk's content is a whole message, never chunks again.
                if BinaryPackChunking.Chunk(inner) != nil { return .unreadable("a chunked message made of chunks") }
                return interpret(inner)
            }
            return .unreadable("a BinaryPack map (only strings and bytes are read)")
        default:
            return .unreadable("a BinaryPack \(Self.kind(of: value)) (only strings and bytes are read)")
        }
    }

    private mutating func readJSON(_ frame: DataMessage) -> Incoming {
        if case .text = frame { jsonInTextFrames = true }
        let bytes = frame.frameBytes
        if bytes.count < 200, let notice = try? JSONDecoder().decode([String: [String: String]].self, from: Data(bytes)), // not that object: a message
           notice["__peerData"]?["type"] == "close" {
            return .close
        }
        // A JSON string is delivered as its text; any other JSON as the JSON text itself.
        if let text = try? JSONDecoder().decode(String.self, from: Data(bytes)) { return .message(.text(text)) } // not a JSON string: as JSON text below
        guard let text = String(validating: bytes, as: UTF8.self) else { return .unreadable("JSON that is not UTF-8") }
        return .message(.text(text))
    }

    private func frameText(_ frame: DataMessage) -> String {
        if case .text(let text) = frame { text } else { "" }
    }

    private static func kind(of value: BinaryPackValue) -> String {
        switch value {
        case .null: "null"
        case .bool: "boolean"
        case .int, .double: "number"
        case .array: "array"
        default: "value"
        }
    }
}
