import Foundation

/// Reads and drops what a peer still sends on a connection this side has finished with, until the
/// peer ends its side or `cancel()`, then lets the connection go: a peer that writes before it
/// reads would otherwise meet a reset (unread input makes the kernel answer a close with RST) and
/// lose the last answer sent to it. Raw bytes, TLS or not: nothing of them is kept. Its handlers
/// run on one serial queue, off the main loop.
// @unchecked Sendable: `source` is immutable, and cancelling a dispatch source is thread-safe.
final class InputDrain: @unchecked Sendable {
    private let source: any DispatchSourceRead
    private static let queue = DispatchQueue(label: "connection-drain")

    /// Starts draining `descriptor`; `owner`, what keeps the descriptor open, is released only
    /// after the last read.
    init(descriptor: Int32, keeping owner: some Sendable) {
        source = DispatchSource.makeReadSource(fileDescriptor: descriptor, queue: Self.queue)
        source.setEventHandler { [source] in
            var buffer = [UInt8](repeating: 0, count: 16 << 10)
            let count = recv(descriptor, &buffer, buffer.count, Int32(MSG_DONTWAIT))
            if count == 0 || (count < 0 && errno != EAGAIN && errno != EINTR) { source.cancel() }
        }
        source.setCancelHandler { withExtendedLifetime(owner) {} }
        source.resume()
    }

    func cancel() { source.cancel() }

    /// Cancels the drain after `delay`, unless the peer ended first.
    func cancel(after delay: Duration) {
        let (seconds, attoseconds) = delay.components
        Self.queue.asyncAfter(deadline: .now() + Double(seconds) + Double(attoseconds) / 1e18) { [self] in cancel() }
    }
}

/// A descriptor this side duplicated to keep a connection open after its owner let go; closed
/// when the last reference goes.
final class DuplicatedDescriptor: Sendable {
    let descriptor: Int32
    init?(of descriptor: Int32) {
        let duplicate = fcntl(descriptor, F_DUPFD_CLOEXEC, 0)
        guard duplicate >= 0 else { return nil }
        self.descriptor = duplicate
    }
    deinit { close(descriptor) }
}
