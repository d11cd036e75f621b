import ECVRecording
import Foundation
import MediaRuntime
import MediaTestSupport
import Testing
@testable import WebRTC

/// A recorder killed with SIGKILL in the middle of a call leaves a file that plays up to about
/// the moment of the kill. The recording runs in a child process (`ecv-recording-probe`).
@Suite(.serialized) struct RecordingCrashTests {
    /// Matroska loses at most its last cluster (≤ 1 s). Fragmented MP4 loses at most its last
    /// fragment, and a video fragment can only end at a key frame: the call's encoders send one
    /// every 2 s, so up to 2 s + the 1 s fragment duration.
    @Test(arguments: [("VP8", "matroska", 2.0), ("H264", "mp4", 3.0)])
    func aKilledRecorderLeavesAPlayableFile(codec: String, format: String, allowedLoss: Double) async throws {
        let url = recordingFile("killed.\(format == "mp4" ? "mp4" : "mkv")")
        let probe = try RecordingProbe(output: url, codec: codec, format: format)
        defer { probe.terminate() }
        let (zero, fileStart) = try await probe.waitUntilRecording()

        // Let the file grow for a few seconds, then kill the process without warning.
        var size = 0, grew = 0
        let deadline = ContinuousClock.now + .seconds(30)
        while grew < 16 {
            guard ContinuousClock.now < deadline else { throw TestFailure("the file grew in only \(grew) polls within 30 s: \(size) bytes") }
            try await Task.sleep(for: .milliseconds(250))
            let now = (try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int) ?? 0
            if now > size { grew += 1 }
            size = now
        }
        let killedAt = Date().timeIntervalSince1970
        probe.kill()
        let fileTimeAtKill = killedAt - zero - fileStart

        let info = try await RecordingInspector.inspect(url)
        #expect(info.videoTracks.count == 2 && info.audioTracks.count == 2, "\(info.tracks.map(\.pad))")
        for track in info.tracks where !track.isText {
            #expect(track.frames > 30, "\(track.pad) has \(track.frames) frames")
        }
        let last = try #require(info.lastTime)
        print("crash safety, \(codec) in \(format): the file plays to \(last) s; killed at \(fileTimeAtKill) s")
        #expect(last >= fileTimeAtKill - allowedLoss, "the file plays to \(last) s; the process was killed at \(fileTimeAtKill) s")
        #expect(last <= fileTimeAtKill + 0.5)
        let discovery = try Discovery.run(url)
        #expect(discovery.streams("video").count == 2 && discovery.streams("audio").count == 2, "\(discovery.output)")
    }
}

/// The `ecv-recording-probe` executable, built next to this test bundle.
final class RecordingProbe: @unchecked Sendable {
    // @unchecked Sendable: `process` and `output` are set once in init; Process and FileHandle
    // are used from one test task at a time.
    let process = Process()
    private let output = Pipe()

    static var executable: URL {
        get throws {
            let candidates = [Bundle.main.executableURL, URL(fileURLWithPath: CommandLine.arguments[0])].compactMap { $0 }
            for start in candidates {
                var directory = start.deletingLastPathComponent()
                for _ in 0..<4 {
                    let probe = directory.appendingPathComponent("ecv-recording-probe")
                    if FileManager.default.isExecutableFile(atPath: probe.path) { return probe }
                    directory = directory.deletingLastPathComponent()
                }
            }
            throw TestFailure("ecv-recording-probe is not built next to \(candidates.map(\.path)); run swift build --build-tests")
        }
    }

    init(output url: URL, codec: String, format: String) throws {
        process.executableURL = try Self.executable
        process.arguments = [url.path, codec, format]
        process.standardOutput = output
        try process.run()
    }

    /// Waits for the probe's "recording <zero> <fileStart>" line.
    /// A probe that has not started within `timeout` is killed, which ends the (blocking) read.
    func waitUntilRecording(timeout: Duration = .seconds(45)) async throws -> (zero: Double, fileStart: Double) {
        let handle = output.fileHandleForReading
        let watchdog = Task { [self] in
            try? await Task.sleep(for: timeout)
            if !Task.isCancelled { terminate() }
        }
        defer { watchdog.cancel() }
        let line = try await Task.detached {
            var text = ""
            while !text.contains("\n") {
                let chunk = handle.availableData
                if chunk.isEmpty { throw TestFailure("the probe exited (or took over \(timeout)) before recording: \(text)") }
                text += String(decoding: chunk, as: UTF8.self)
            }
            return text
        }.value
        let fields = line.split(whereSeparator: \.isWhitespace)
        guard fields.count == 3, fields[0] == "recording", let zero = Double(fields[1]), let fileStart = Double(fields[2]) else {
            throw TestFailure("unexpected probe output: \(line)")
        }
        return (zero, fileStart)
    }

    func kill() {
        Foundation.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    func terminate() {
        if process.isRunning { kill() }
    }
}
