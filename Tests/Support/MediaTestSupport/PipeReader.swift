import Foundation
import GLibCore

/// Reads what a child process writes to a pipe, with blocking reads on a thread of its own.
///
/// Not `FileHandle.readabilityHandler`: that installs a libdispatch read source, and on Linux
/// tearing such sources down while others are set up (every child a test starts and stops) leaves
/// libdispatch's epoll bookkeeping pointing at freed memory; its manager thread then dies with
/// SIGSEGV in `_dispatch_event_loop_drain` (swift-corelibs-libdispatch#949,
/// swift-corelibs-foundation#3276). It crashed the suite once in a Chromium interop test. A
/// blocking read never registers the descriptor with libdispatch. It also ends at the end of the
/// stream, where a handler left installed is called again and again.
package enum PipeReader {
    /// Hands each chunk read from `handle` to `onChunk` until the end of the stream, or until
    /// `onChunk` answers false (the handle is then left open for its owner to close); `onEnd`
    /// runs once reading stopped either way. Every writer's end must be closed for the end to
    /// come (a `Process` closes the parent's copy when it starts the child).
    package static func read(_ handle: FileHandle, onEnd: @escaping @Sendable () -> Void = {},
                             onChunk: @escaping @Sendable (Data) -> Bool) {
        let thread = Thread {
            defer { onEnd() }
            while true {
                let data = handle.availableData
                if data.isEmpty || !onChunk(data) { return }
            }
        }
        thread.name = "pipe-reader"
        thread.start()
    }

    /// Appends what `handle` carries to `text` until the end of the stream.
    package static func collect(_ handle: FileHandle, into text: Locked<String>) {
        read(handle) { data in
            text.withLock { $0 += String(decoding: data, as: UTF8.self) }
            return true
        }
    }

    /// Hands each complete line `handle` carries (without its newline) to `onLine`; a last line
    /// without a newline is handed over at the end, before `onEnd`.
    package static func lines(_ handle: FileHandle, onEnd: @escaping @Sendable () -> Void = {},
                              onLine: @escaping @Sendable (String) -> Void) {
        let pending = Locked("")
        read(handle, onEnd: {
            let rest = pending.withLock { buffer in defer { buffer = "" }; return buffer }
            if !rest.isEmpty { onLine(rest) }
            onEnd()
        }) { data in
            let complete = pending.withLock { buffer -> [String] in
                buffer += String(decoding: data, as: UTF8.self)
                var parts = buffer.components(separatedBy: "\n")
                buffer = parts.removeLast()
                return parts
            }
            complete.forEach(onLine)
            return true
        }
    }
}
