import Foundation
import GLibCore
import GStreamer
import MediaTestSupport

/// Where the foreign peers and what they need live: the test venv `make test` creates
/// (`.build/interop-venv`, from Tests/Interop/requirements.txt) and Debian's Chromium.
enum InteropEnvironment {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let python = repository.appendingPathComponent(".build/interop-venv/bin/python").path
    static let peers = repository.appendingPathComponent("Tests/Interop/peers")
    static let chromium = "/usr/bin/chromium"
    static let chromedriver = "/usr/bin/chromedriver"

    static var hasVenv: Bool { FileManager.default.isExecutableFile(atPath: python) }
    /// Whether the venv holds `file` of an installed package (`peerjs/peer.py`).
    static func hasVenvPackage(_ file: String) -> Bool {
        hasVenv && FileManager.default.fileExists(atPath: repository.appendingPathComponent(".build/interop-venv/lib/python3.11/site-packages/" + file).path)
    }
    static var hasChromium: Bool {
        hasVenv && FileManager.default.isExecutableFile(atPath: chromium) && FileManager.default.isExecutableFile(atPath: chromedriver)
    }
    static let missingVenv = "the interop venv .build/interop-venv is missing: run `make test-deps` (make test does)"
    static let missingChromium = "chromium, chromium-driver or the interop venv is missing: run `make test-deps` (make test does)"
}

/// What a foreign peer reported in its one summary line, the same fields for Chromium and aiortc.
struct ForeignSummary: Sendable, CustomStringConvertible {
    var ok = false
    var errors: [String] = []
    var mediaSeconds = 0.0
    var channelLabel: String?
    var channelState: String?
    var connectionState = ""
    var received: [String] = []
    var sent: [String] = []
    var framesDecoded = 0
    var framesSent = 0
    var audioReceived = 0
    var videoCodecIn: String?
    var videoCodecOut: String?
    var pliSent = 0
    var pliReceived = 0
    var firSent = 0
    var firReceived = 0
    /// Video NACKs the foreign peer sent (asking ECVKit to resend) and received (Chromium only).
    var nackSent = 0
    var nackReceived = 0
    /// Wall-clock times (seconds since 1970) at which ECVKit asked the foreign sender for a key frame.
    var keyframeRequests: [Double] = []
    /// aiortc's RTP packet counts per kind and direction ("video inbound-rtp 480"), the PLIs it sent
    /// and the payloads it could not parse.
    var rtp: [String] = []
    var pageLog: [String] = []
    /// Chromium's video sender and selected pair as its stats last saw them (why it sends what it
    /// sends: `qualityLimitationReason`, target and available bitrates), for failure reports.
    var sender: [String] = []
    /// The negotiated SDP lines (m=, rtpmap, fmtp, direction, setup, fingerprint), local then remote.
    var sdp: [String: [String]] = [:]
    var raw = ""

    init(line: String, peer: InteropCell.Peer) throws {
        raw = line
        guard let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
            throw TestFailure("the peer's summary is not a JSON object: \(line)")
        }
        ok = object["ok"] as? Bool ?? false
        errors = object["errors"] as? [String] ?? []
        mediaSeconds = object["mediaSeconds"] as? Double ?? 0
        switch peer {
        case .aiortc:
            let channel = object["channel"] as? [String: Any]
            channelLabel = channel?["label"] as? String
            channelState = channel?["state"] as? String
            connectionState = object["connectionState"] as? String ?? ""
            received = object["received"] as? [String] ?? []
            sent = object["sent"] as? [String] ?? []
            framesDecoded = object["framesDecoded"] as? Int ?? 0
            framesSent = object["framesSent"] as? Int ?? 0
            audioReceived = object["audioFramesReceived"] as? Int ?? 0
            let negotiated = object["negotiated"] as? [String: String] ?? [:]
            videoCodecIn = negotiated["video"]
            videoCodecOut = negotiated["video"]
            sdp = object["sdp"] as? [String: [String]] ?? [:]
            keyframeRequests = (object["keyframeRequests"] as? [Double] ?? []).map { $0 / 1000 }
            rtp = (object["rtp"] as? [String: Any] ?? [:]).map { "\($0.key) \($0.value)" }.sorted()
                + (object["receiveTrouble"] as? [String: Any] ?? [:]).map { "\($0.key) \($0.value)" }.sorted()
        case .chromium:
            let state = object["state"] as? [String: Any] ?? [:]
            let channel = state["channel"] as? [String: Any]
            channelLabel = channel?["label"] as? String
            channelState = channel?["state"] as? String
            connectionState = state["connectionState"] as? String ?? ""
            received = state["received"] as? [String] ?? []
            sent = state["sent"] as? [String] ?? []
            let stats = object["stats"] as? [String: Any] ?? [:]
            func counter(_ kind: String, _ direction: String, _ name: String) -> Any? {
                ((stats[kind] as? [String: Any])?[direction] as? [String: Any])?[name]
            }
            framesDecoded = counter("video", "inbound", "framesDecoded") as? Int ?? 0
            framesSent = counter("video", "outbound", "framesSent") as? Int ?? 0
            audioReceived = counter("audio", "inbound", "packetsReceived") as? Int ?? 0
            videoCodecIn = counter("video", "inbound", "mimeType") as? String
            videoCodecOut = counter("video", "outbound", "mimeType") as? String
            pliSent = counter("video", "inbound", "pliCount") as? Int ?? 0
            pliReceived = counter("video", "outbound", "pliCount") as? Int ?? 0
            firSent = counter("video", "inbound", "firCount") as? Int ?? 0
            firReceived = counter("video", "outbound", "firCount") as? Int ?? 0
            nackSent = counter("video", "inbound", "nackCount") as? Int ?? 0
            nackReceived = counter("video", "outbound", "nackCount") as? Int ?? 0
            pageLog = object["log"] as? [String] ?? []
            let outbound = (stats["video"] as? [String: Any])?["outbound"] as? [String: Any] ?? [:]
            sender = (outbound.merging(stats["transport"] as? [String: Any] ?? [:]) { first, _ in first })
                .map { "\($0.key) \($0.value)" }.sorted()
            sdp = state["sdp"] as? [String: [String]] ?? [:]
            keyframeRequests = (state["keyframeRequests"] as? [[String: Any]] ?? []).compactMap { ($0["at"] as? Double).map { $0 / 1000 } }
        }
    }

    var description: String { raw }

    /// What a failing cell prints: errors, the page's log, and the SDP both sides agreed on.
    var evidence: String {
        var lines = ["errors: \(errors)", "connection: \(connectionState), channel \(channelLabel ?? "-") \(channelState ?? "-")"]
        if !rtp.isEmpty { lines.append("RTP packets: " + rtp.joined(separator: ", ")) }
        if !sender.isEmpty { lines.append("video sender: " + sender.joined(separator: ", ")) }
        if !pageLog.isEmpty { lines.append("page log:\n  " + pageLog.joined(separator: "\n  ")) }
        for side in ["local", "remote"] { lines.append("\(side) SDP (the foreign peer's view):\n  " + (sdp[side] ?? []).joined(separator: "\n  ")) }
        return lines.joined(separator: "\n")
    }
}

/// A foreign peer process (Tests/Interop/peers/*.py) and its output, read line by line.
/// Its stdin stays open until `finish()`: the peer prints its summary and then waits, so the
/// test can stop ECVKit's recording while the call still runs.
final class ForeignPeer: Sendable {
    private let process: Process
    private let input: Pipe
    private let stdoutLines = Locked<[String]>([])
    private let stderrLines = Locked<[String]>([])
    let name: String

    convenience init(script: String, arguments: [String], name: String) throws {
        try self.init(executable: URL(fileURLWithPath: InteropEnvironment.python),
                      arguments: ["-u", InteropEnvironment.peers.appendingPathComponent(script).path] + arguments, name: name)
    }

    /// Any process whose output is followed the same way (the `ecv` command in the CLI cells).
    init(executable: URL, arguments: [String], name: String) throws {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        let input = Pipe(), output = Pipe(), errors = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = errors
        self.process = process
        self.input = input
        self.name = name
        try process.run()
        let (stdoutLines, stderrLines) = (stdoutLines, stderrLines)
        PipeReader.lines(output.fileHandleForReading) { line in stdoutLines.withLock { $0.append(line) } }
        PipeReader.lines(errors.fileHandleForReading) { line in stderrLines.withLock { $0.append(line) } }
    }

    var progress: [String] { stderrLines.withLock { $0 } }
    var output: [String] { stdoutLines.withLock { $0 } }
    var exitStatus: Int32? { process.isRunning ? nil : process.terminationStatus }
    var isRunning: Bool { process.isRunning }

    /// Waits for a progress line starting with `prefix` (the peer's stderr); returns it.
    @discardableResult
    func waitForProgress(_ prefix: String, timeout: Duration = .seconds(40)) async throws -> String {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let line = progress.first(where: { $0.hasPrefix(prefix) }) { return line }
            if !process.isRunning, progress.first(where: { $0.hasPrefix(prefix) }) == nil {
                try await Task.sleep(for: .milliseconds(200)) // the last lines may still be in the pipe
                if let line = progress.first(where: { $0.hasPrefix(prefix) }) { return line }
                throw TestFailure("\(name) exited (\(process.terminationStatus)) before \"\(prefix)\":\n\(transcript)")
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw TestFailure("\(name): no \"\(prefix)\" within \(timeout):\n\(transcript)")
    }

    /// Waits for the one JSON summary line on stdout.
    func summary(peer: InteropCell.Peer, timeout: Duration) async throws -> ForeignSummary {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let line = stdoutLines.withLock({ $0.first { $0.hasPrefix("{") } }) { return try ForeignSummary(line: line, peer: peer) }
            if !process.isRunning { try await Task.sleep(for: .milliseconds(200)) }
            if !process.isRunning, stdoutLines.withLock({ $0.first { $0.hasPrefix("{") } }) == nil {
                throw TestFailure("\(name) exited (\(process.terminationStatus)) without a summary:\n\(transcript)")
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw TestFailure("\(name): no summary within \(timeout):\n\(transcript)")
    }

    /// When the test gives up on a cell: the peer reports what it has now (SIGTERM makes it print its
    /// summary early), so the failure shows the page's log and SDP. Nil when it cannot.
    func interruptedSummary(peer: InteropCell.Peer) async -> ForeignSummary? {
        if stdoutLines.withLock({ $0.first { $0.hasPrefix("{") } }) == nil, process.isRunning {
            kill(process.processIdentifier, SIGTERM)
        }
        return try? await summary(peer: peer, timeout: .seconds(15))
    }

    var transcript: String {
        (stderrLines.withLock { $0 }.suffix(40) + stdoutLines.withLock { $0 }.map { String($0.prefix(4000)) })
            .joined(separator: "\n")
    }

    /// Closes the peer's stdin (it says bye and leaves) and waits for it to exit; kills it after `timeout`.
    func finish(timeout: Duration = .seconds(15)) async {
        try? input.fileHandleForWriting.close()
        let deadline = ContinuousClock.now + timeout
        while process.isRunning, ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(100)) }
        if process.isRunning {
            process.terminate()
            try? await Task.sleep(for: .seconds(2))
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        }
    }
}
