/// PeerJS's chunking of large messages on `binary` data connections, as every PeerJS version does
/// it: a packed message longer than `chunkedMTU` bytes goes as packed maps
/// `{"__peerData": id, "n": i, "data": <bytes i>, "total": t}`, each carrying the next slice of the
/// packed message; the receiver joins the slices of one id in order of `n` and unpacks the whole.
enum BinaryPackChunking {
    /// PeerJS's `util.chunkedMTU`: a packed message longer than this is chunked.
    static let chunkedMTU = 16_300

    /// The frames for one packed message: itself when it fits, else its chunks under `id`.
    static func frames(for packed: [UInt8], id: Int) -> [[UInt8]] {
        guard packed.count > chunkedMTU else { return [packed] }
        let total = (packed.count + chunkedMTU - 1) / chunkedMTU
        return (0..<total).map { index in
            let start = index * chunkedMTU, end = min(packed.count, start + chunkedMTU)
            return BinaryPackValue.map([
                .init(key: .text("__peerData"), value: .int(Int64(id))),
                .init(key: .text("n"), value: .int(Int64(index))),
                .init(key: .text("data"), value: .bytes(Array(packed[start..<end]))),
                .init(key: .text("total"), value: .int(Int64(total))),
            ]).packed()
        }
    }

    /// One chunk as read from its map; nil when the map is not a chunk.
    struct Chunk: Equatable, Sendable {
        var id: Int
        var index: Int
        var total: Int
        var data: [UInt8]

        init?(_ value: BinaryPackValue) {
            guard let id = value["__peerData"]?.intValue, let index = value["n"]?.intValue, let total = value["total"]?.intValue,
                  case .bytes(let data)? = value["data"] else { return nil }
            (self.id, self.index, self.total, self.data) = (id, index, total, data)
        }
    }

    enum ReassemblyError: Error, Equatable, CustomStringConvertible {
        case badIndex(index: Int, total: Int)
        case tooLarge(limit: Int)
        case tooManyPending(limit: Int)

        var description: String {
            switch self {
            case .badIndex(let index, let total): "chunk \(index) of \(total)"
            case .tooLarge(let limit): "a chunked message over \(limit) bytes"
            case .tooManyPending(let limit): "more than \(limit) chunked messages under way at once"
            }
        }
    }

    /// The chunks of messages under way, bounded in bytes (all of them together) and in count.
    struct Reassembly: Sendable {
        private struct Partial: Sendable {
            var total: Int
            var parts: [Int: [UInt8]] = [:]
            var bytes = 0
        }
        private var partials: [Int: Partial] = [:]
        let maxMessageBytes: Int
        let maxPending: Int

        init(maxMessageBytes: Int, maxPending: Int = 4) {
            self.maxMessageBytes = maxMessageBytes
            self.maxPending = maxPending
        }

        private var pendingBytes: Int { partials.values.reduce(0) { $0 + $1.bytes } }

        /// Adds `chunk`; the whole packed message once its last chunk came, nil before. An error
        /// drops the message it belongs to.
        mutating func add(_ chunk: Chunk) throws(ReassemblyError) -> [UInt8]? {
            // Each chunk carries at least one byte: more chunks than the bound in bytes cannot be.
            guard chunk.total >= 1, chunk.total <= maxMessageBytes, (0..<chunk.total).contains(chunk.index) else {
                partials[chunk.id] = nil
                throw .badIndex(index: chunk.index, total: chunk.total)
            }
            if partials[chunk.id] == nil {
                guard partials.count < maxPending else { throw .tooManyPending(limit: maxPending) }
                partials[chunk.id] = Partial(total: chunk.total)
            }
            guard var partial = partials[chunk.id], partial.total == chunk.total else {
                partials[chunk.id] = nil
                throw .badIndex(index: chunk.index, total: chunk.total)
            }
            let replaced = partial.parts[chunk.index]?.count ?? 0
            guard partial.bytes - replaced + chunk.data.count <= maxMessageBytes, pendingBytes - replaced + chunk.data.count <= maxMessageBytes else {
                partials[chunk.id] = nil
                throw .tooLarge(limit: maxMessageBytes)
            }
            partial.parts[chunk.index] = chunk.data
            partial.bytes += chunk.data.count - replaced
            guard partial.parts.count == partial.total else {
                partials[chunk.id] = partial
                return nil
            }
            partials[chunk.id] = nil
            var whole: [UInt8] = []
            whole.reserveCapacity(partial.bytes)
            for index in 0..<partial.total { whole += partial.parts[index] ?? [] }
            return whole
        }
    }
}
