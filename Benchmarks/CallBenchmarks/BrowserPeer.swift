import Foundation
import GLibCore
import NetworkTestSupport

/// One `Tests/Interop/peers/chromium_peer.py`: headless Chromium on the reference service's
/// browser page. Its progress lines (stderr) and its one JSON summary (stdout) are collected by
/// a `LineReader` each; `close()` ends it (stdin closed, then SIGKILL if it lingers).
final class BrowserPeer: Sendable {
    let name: String
    private let process: Process
    private let input: FileHandle
    private let progressLines = Locked<[String]>([])
    private let summaryLine = Locked<String?>(nil)

    /// `prefix` runs it elsewhere (`ip netns exec <lab>`); `python` is the interop venv's.
    convenience init(name: String, prefix: [String], python: String, script: String, page: String, duration: Double) throws {
        try self.init(name: name, command: prefix + [python, "-u", script, "--page", page, "--duration", String(duration),
                                                     "--connect-timeout", "45"])
    }

    /// Any of the interop peers (`aiortc_peer.py` too): they share the progress and summary lines.
    init(name: String, command: [String]) throws {
        self.name = name
        process = Process()
        process.executableURL = URL(fileURLWithPath: command[0])
        process.arguments = Array(command.dropFirst())
        let stdin = Pipe(), stdout = Pipe(), stderr = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stderr
        input = stdin.fileHandleForWriting
        try process.run()
        let progressLines = self.progressLines, summaryLine = self.summaryLine
        LineReader.start(stderr.fileHandleForReading.fileDescriptor) { line in progressLines.withLock { $0.append(line) } }
        LineReader.start(stdout.fileHandleForReading.fileDescriptor) { line in
            if line.hasPrefix("{") { summaryLine.withLock { $0 = line } }
        }
    }

    /// Waits for a progress line starting with `prefix`; throws with the transcript when it does not come.
    func waitFor(_ prefix: String, timeout: Double) async throws {
        let deadline = Date().addingTimeInterval(timeout)
        while !progressLines.value.contains(where: { $0.hasPrefix(prefix) }) {
            guard Date() < deadline, process.isRunning || summaryLine.value == nil else {
                throw BrowserPeerError(message: "\(name): no \"\(prefix)\" within \(Int(timeout)) s; it said: "
                                       + progressLines.value.suffix(6).joined(separator: " | "))
            }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    /// The page's summary once the peer printed it.
    func summary(timeout: Double) async throws -> BrowserSummary {
        let deadline = Date().addingTimeInterval(timeout)
        while summaryLine.value == nil {
            guard Date() < deadline else {
                throw BrowserPeerError(message: "\(name): no summary within \(Int(timeout)) s; it said: "
                                       + progressLines.value.suffix(6).joined(separator: " | "))
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        do {
            return try JSONDecoder().decode(BrowserSummary.self, from: Data((summaryLine.value ?? "").utf8))
        } catch {
            throw BrowserPeerError(message: "\(name): unreadable summary: \(error)")
        }
    }

    /// Closes its stdin (the peer then leaves the room and quits Chromium) and kills it after 10 s.
    func close() async {
        // The peer may have exited and closed its end already.
        try? input.close()
        let deadline = Date().addingTimeInterval(10)
        // A cancelled sleep only ends the wait early; the kill below still follows.
        while process.isRunning, Date() < deadline { try? await Task.sleep(for: .milliseconds(100)) }
        if process.isRunning {
            // SIGTERM makes the peer kill its browser's process group; SIGKILL if even that hangs.
            process.terminate()
            // As above: cancelled, it goes straight to SIGKILL.
            try? await Task.sleep(for: .seconds(2))
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        }
    }
}

struct BrowserPeerError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}

/// The part of chromium_peer.py's summary the benchmark reads.
struct BrowserSummary: Decodable {
    struct KeyFrameRequest: Decodable { var at: Double }
    struct State: Decodable {
        var joinedAt: Double?
        /// `?watch=keyframes`: when the page's video sender had been asked for key frames (wall-clock ms, sampled every 100 ms).
        var keyframeRequests: [KeyFrameRequest]?
    }
    struct Counters: Decodable {
        var framesDecoded: Double?
        var bytesSent: Double?
        var totalFreezesDuration: Double?
    }
    struct Directions: Decodable { var inbound: Counters?; var outbound: Counters? }
    struct Stats: Decodable { var video: Directions? }

    var ok: Bool
    var errors: [String]
    var mediaSeconds: Double?
    var state: State?
    var stats: Stats?
    /// `[wall-clock ms, framesDecoded]` every 50 ms (`?watch=frames`).
    var frames: [[Double]]?
    var log: [String]?
    /// aiortc_peer.py: when its video sender answered a PLI/FIR (wall-clock ms).
    var keyframeRequests: [Double]?

    /// When the sender was asked for key frames, wall-clock ms, whichever peer it was.
    var keyFrameRequestTimes: [Double] { keyframeRequests ?? state?.keyframeRequests?.map(\.at) ?? [] }
}
