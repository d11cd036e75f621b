import Foundation
import Synchronization

/// A file a recording owns while it runs: checked writable up front (so a bad path fails at
/// start with a clear error, not as a filesink error later) and reserved process-wide so two
/// recordings never interleave into one file.
final class RecordingFile: Sendable {
    private static let active = Mutex<Set<String>>([])

    let path: String
    private let released = Mutex(false)

    /// Reserves `url`, checks its directory, and creates (or truncates) the file.
    init(url: URL, replaceExisting: Bool) throws(RecordingError) {
        guard url.isFileURL else { throw .cannotWrite(path: url.absoluteString, reason: "not a file URL") }
        let path = url.standardizedFileURL.path
        self.path = path
        let reserved = Self.active.withLock { $0.insert(path).inserted }
        guard reserved else { throw .alreadyRecording(path: path) }
        do throws(RecordingError) {
            try Self.prepare(path: path, replaceExisting: replaceExisting)
        } catch {
            _ = Self.active.withLock { $0.remove(path) }
            throw error
        }
    }

    private static func prepare(path: String, replaceExisting: Bool) throws(RecordingError) {
        let manager = FileManager.default
        let directory = (path as NSString).deletingLastPathComponent
        var isDirectory: ObjCBool = false
        guard manager.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw .cannotWrite(path: path, reason: "the directory \(directory) does not exist")
        }
        if manager.fileExists(atPath: path, isDirectory: &isDirectory) {
            guard !isDirectory.boolValue else { throw .cannotWrite(path: path, reason: "it is a directory") }
            guard replaceExisting else { throw .fileExists(path: path) }
        }
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            throw .cannotWrite(path: path, reason: String(cString: strerror(errno)))
        }
        close(descriptor)
    }

    /// A sibling file: `<file>.<suffix>`.
    func sidecar(_ suffix: String) -> URL { URL(fileURLWithPath: path + "." + suffix) }

    /// Ends the reservation; idempotent.
    func release() {
        let first = released.withLock { released in defer { released = true }; return !released }
        if first { _ = Self.active.withLock { $0.remove(path) } }
    }

    deinit { release() }
}

/// Appends lines to a file with one `write(2)` each, so a killed process leaves whole lines.
final class LineWriter: Sendable {
    private let descriptor: Mutex<Int32>
    private let path: String

    init(url: URL) throws(RecordingError) {
        path = url.path
        let fd = open(url.path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw .cannotWrite(path: url.path, reason: String(cString: strerror(errno))) }
        descriptor = Mutex(fd)
    }

    /// Throws `cannotWrite` when the line did not go out whole (a full disk), `alreadyStopped`
    /// once the writer is closed.
    func append(_ line: String) throws(RecordingError) {
        let bytes = Array((line + "\n").utf8)
        let failure = descriptor.withLock { fd -> RecordingError? in
            guard fd >= 0 else { return .alreadyStopped }
            let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            guard written != bytes.count else { return nil }
            let reason = written < 0 ? String(cString: strerror(errno)) : "\(written) of \(bytes.count) bytes of a line written"
            return .cannotWrite(path: path, reason: reason)
        }
        if let failure { throw failure }
    }

    func close() {
        descriptor.withLock { fd in
            if fd >= 0 { _ = Foundation.close(fd) }
            fd = -1
        }
    }

    deinit { close() }
}

/// Replaces a small file's contents atomically (write a temporary, rename over), so readers and
/// a crash only ever see a complete document.
func writeAtomically(_ data: Data, to url: URL) throws(RecordingError) {
    do {
        try data.write(to: url, options: .atomic)
    } catch {
        throw .cannotWrite(path: url.path, reason: error.localizedDescription)
    }
}
