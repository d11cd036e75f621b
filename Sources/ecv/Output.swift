import Foundation
import GLibCore

func printErr(_ text: String) {
    FileHandle.standardError.write(Data((text + "\n").utf8))
}

/// Writes a line to standard output at once (no stdio buffering between us and a reading script).
/// When the reader has gone (`ecv call --json | head -3`; GLib ignores SIGPIPE, so the write fails
/// with EPIPE instead of ending the process) nothing more is written and the command stops as after
/// Ctrl-C: a call hangs up, a bot logs out.
func say(_ text: String) {
    guard !StandardOutput.isClosed else { return }
    var bytes = Array((text + "\n").utf8)[...]
    while !bytes.isEmpty {
        let written = bytes.withUnsafeBytes { write(STDOUT_FILENO, $0.baseAddress, $0.count) }
        if written > 0 { bytes = bytes.dropFirst(written); continue }
        if written < 0, errno == EINTR { continue }
        StandardOutput.readerLeft()
        return
    }
}

/// Whether standard output's reader has gone.
enum StandardOutput {
    private static let closed = Locked(false)

    static var isClosed: Bool { closed.value }

    static func readerLeft() {
        let first = closed.withLock { closed in defer { closed = true }; return !closed }
        if first { Interrupts.stop(because: "standard output was closed") }
    }
}

/// One JSON object per line, for scripts (`--json`).
enum NDJSON {
    static func line(_ fields: [String: any Sendable]) -> String {
        guard JSONSerialization.isValidJSONObject(fields.mapValues { $0 as Any }),
              // Checked as valid just above; a failure still prints the fallback line, never nothing.
              let data = try? JSONSerialization.data(withJSONObject: fields.mapValues { $0 as Any }, options: [.sortedKeys]) else {
            return "{\"error\":\"unencodable event\"}"
        }
        return String(decoding: data, as: UTF8.self)
    }

    static func emit(_ fields: [String: any Sendable]) { say(line(fields)) }
}
