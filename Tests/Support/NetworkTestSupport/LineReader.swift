import Foundation

/// Reads a child's output line by line on a thread of its own (a blocking read must not hold one
/// of the few cooperative threads), until the descriptor closes.
package enum LineReader {
    /// Calls `handle` with each line (without its newline), then `finished`. A line longer than
    /// `limit` bytes is dropped, so a child that never ends a line cannot grow the buffer forever.
    package static func start(_ descriptor: Int32, limit: Int = 16_000_000, _ handle: @escaping @Sendable (String) -> Void,
                             finished: @escaping @Sendable () -> Void = {}) {
        Thread {
            // read(2) rather than FileHandle: a signal to this process (EINTR) must not end it.
            var buffer = Data()
            var chunk = [UInt8](repeating: 0, count: 65_536)
            while true {
                let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { break }
                buffer.append(contentsOf: chunk[0..<count])
                while let newline = buffer.firstIndex(of: 0x0A) {
                    handle(String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self))
                    buffer.removeSubrange(buffer.startIndex...newline)
                }
                if buffer.count > limit { buffer.removeAll() }
            }
            finished()
        }.start()
    }
}
