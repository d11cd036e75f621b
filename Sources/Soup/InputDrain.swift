import Foundation
internal import GLibCore

/// Reads and drops what a peer still sends on a connection this side has finished with, until the
/// peer ends its side or `cancel()`, then lets the connection go: a peer that writes before it
/// reads would otherwise meet a reset (unread input makes the kernel answer a close with RST) and
/// lose the last answer sent to it. Raw bytes, TLS or not: nothing of them is kept. It reads on
/// the main loop, one bounded read per wake-up (never a libdispatch read source: see
/// `MainLoop.watchInput`).
final class InputDrain: Sendable {
    private let watch: MainLoop.Timer

    /// Starts draining `descriptor`; `owner`, what keeps the descriptor open, is released only
    /// after the last read.
    init(descriptor: Int32, keeping owner: some Sendable) {
        watch = MainLoop.shared.watchInput(of: descriptor) {
            withExtendedLifetime(owner) {
                var buffer = [UInt8](repeating: 0, count: 16 << 10)
                let count = recv(descriptor, &buffer, buffer.count, Int32(MSG_DONTWAIT))
                return count > 0 || (count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
            }
        }
    }

    func cancel() { watch.cancel() }

    /// Cancels the drain after `delay`, unless the peer ended first.
    func cancel(after delay: Duration) {
        MainLoop.shared.schedule(after: delay) { [self] in cancel() }
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
