import ECVService
import Foundation
import MediaTestSupport
import Testing

/// `ecv call --record` and `ecv agent --record` check where they record before anything is dialed:
/// a missing folder, an existing file (without `--overwrite`), a container that cannot hold the
/// codec or an unknown extension is bad usage (exit 2, one line naming --record), and no
/// GetRtcId reaches the service. A recording that is not written fails the run (exit 1) and the
/// summary says so instead of naming the file.
@Suite(.serialized) struct RecordingPreflightTests {
    static func scratch() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ecv-preflight-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    @Test func badRecordingTargetsFailBeforeDialing() async throws {
        let (service, base) = try await startLoopbackService()
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let existing = directory.appendingPathComponent("existing.mkv")
        try Data("old".utf8).write(to: existing)
        let file = directory.appendingPathComponent("file")
        try Data().write(to: file)
        let cases: [(arguments: [String], says: String)] = [
            (["call", "--record", "/no/such/dir/x.mkv"], "there is no directory /no/such/dir"),
            (["call", "--record", existing.path], "pass --overwrite"),
            (["call", "--codec", "H264", "--record", directory.appendingPathComponent("x.webm").path], "WebM cannot hold H264"),
            (["call", "--record", directory.appendingPathComponent("x.mp4").path], "MP4 cannot hold VP8"),
            // Unrestricted, the far end may choose H264, which WebM cannot hold.
            (["call", "--record", directory.appendingPathComponent("x.webm").path], "the far end may choose it"),
            (["call", "--record", directory.appendingPathComponent("x.avi").path], "end the name in .mkv, .webm or .mp4"),
            (["call", "--record-layout", "pip", "--record", directory.appendingPathComponent("pip.mp4").path], "picture-in-picture"),
            (["agent", "--record", "/no/such/dir/calls"], "there is no directory /no/such/dir"),
            (["agent", "--record", file.path], "is a file; give a directory"),
        ]
        for (arguments, says) in cases {
            let result = try await ECVProcess.run(arguments + ["--service-url", base], timeout: .seconds(30))
            #expect(result.status == 2, "\(arguments): \(result.status) \(result.stderr)")
            #expect(result.stderr.contains("--record") && result.stderr.contains(says), "\(arguments): \(result.stderr)")
            #expect(result.stderr.split(separator: "\n").count == 1, "\(arguments): one line: \(result.stderr)")
        }
        #expect(try Data(contentsOf: existing) == Data("old".utf8), "the existing file is untouched")
        let dialed = service.log.entries.filter { $0.category == .rest || $0.category == .agent }
        #expect(dialed.isEmpty, "nothing reached the service: \(dialed.map(\.message))")
        await service.stop()
    }

    /// The file appears after the preflight (here while the call waits for an agent): the
    /// recording cannot start, the call goes on, and the run ends with exit 1 and says the
    /// recording was not written, never "recording: FILE".
    @Test func aRecordingThatWasNotWrittenFailsTheRun() async throws {
        let (service, base) = try await startLoopbackService()
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let record = directory.appendingPathComponent("late.mkv")
        let call = try RunningECV(["call", "--service-url", base, "--width", "160", "--height", "120", "--no-audio-processing",
                                   "--record", record.path, "--duration", "1"])
        defer { call.stop() }
        try await eventually(.seconds(20), "the call waits in the queue") { service.log.entries.contains { $0.message.hasPrefix("DialEx") } }
        try Data("someone else's".utf8).write(to: record)
        let agent = try await startLoopbackAgent(named: "Alice", base: base)
        let status = try await call.exitStatus(within: .seconds(40))
        #expect(status == 1, "\(call.stdout)\n\(call.stderr)")
        #expect(call.stdout.contains("recording NOT written") && !call.stdout.contains("recording: \(record.path)"), "\(call.stdout)")
        #expect(call.stderr.contains("ecv call: the recording \(record.path) was not written"), "\(call.stderr)")
        #expect(try Data(contentsOf: record) == Data("someone else's".utf8))
        await agent.logout()
        await service.stop()
    }

    /// A recording that fails mid-call (its disk fills: a 48 kB tmpfs) is not claimed: the call
    /// goes on to its end, the run exits 1 and says the file was not finalised, and why.
    @Test func aRecordingThatFailsMidCallFailsTheRun() async throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        try shell("mount -t tmpfs -o size=48k tmpfs '\(directory.path)'")
        defer { _ = try? shell("umount '\(directory.path)'") } // the scratch folder goes next either way
        let (service, base) = try await startLoopbackService()
        let agent = try await startLoopbackAgent(named: "Alice", base: base)
        let record = directory.appendingPathComponent("full.mkv")
        let result = try await ECVProcess.run(["call", "--service-url", base, "--width", "320", "--height", "240", "--no-audio-processing",
                                               "--record", record.path, "--duration", "2"], timeout: .seconds(40))
        #expect(result.status == 1, "\(result.stdout)\n\(result.stderr)")
        #expect(result.stdout.contains("ended: LOCAL_HANGUP, recording NOT written (") && result.stdout.contains("No space left"), "\(result.stdout)")
        #expect(result.stderr.hasSuffix("\n") && result.stderr.split(separator: "\n").last?.hasPrefix("ecv call: the recording \(record.path) was not written") == true,
                "\(result.stderr)")
        await agent.logout()
        await service.stop()
    }

    /// `--overwrite` replaces the file (and its sidecars) once the call records, and the run succeeds.
    @Test func overwriteReplacesAnExistingRecording() async throws {
        let (service, base) = try await startLoopbackService()
        let agent = try await startLoopbackAgent(named: "Alice", base: base)
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let record = directory.appendingPathComponent("again.webm")
        try Data("old".utf8).write(to: record)
        let result = try await ECVProcess.run(["call", "--service-url", base, "--width", "160", "--height", "120", "--no-audio-processing",
                                               "--codec", "VP8,VP9", "--record", record.path, "--overwrite", "--duration", "1", "--json"], timeout: .seconds(40))
        #expect(result.status == 0, "\(result.stderr)")
        let recording = try #require(result.stdout.split(separator: "\n").last.flatMap {
            try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        })
        #expect(recording["event"] as? String == "Recording" && recording["file"] as? String == record.path, "\(recording)")
        #expect(recording["written"] as? Bool == true, "\(recording)")
        let header = [UInt8](try Data(contentsOf: record).prefix(4))
        #expect(header == [0x1A, 0x45, 0xDF, 0xA3], "a new WebM file replaced the old one")
        await agent.logout()
        await service.stop()
    }
}
