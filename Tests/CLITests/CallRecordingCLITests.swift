import ECV
import ECVAgent
import ECVProtocol
import ECVService
import ECVRecording
import Foundation
import GLibCore
import MediaRuntime
import MediaTestSupport
import Testing

/// `ecv call --record`: a transferred call's legs each in a file of their own, and the
/// picture-in-picture layout.
@Suite(.serialized) struct CallRecordingCLITests {
    /// As the Turkish guide §7.1 describes: a new call object with the new rtcId, never dialed,
    /// waiting on the queue socket, then connected to the next agent.
    @Test func callFollowsATransferToTheNextAgentAndRecordsBothLegs() async throws {
        let (service, base) = try await startLoopbackService { $0.queues = ["default", "Billing"] }
        let alice = try await startLoopbackAgent(named: "Alice", base: base)
        let bob = try await startLoopbackAgent(named: "Bob", queue: "Billing", base: base)
        // Alice transfers to Billing once the call has media; Bob hangs up after 2.5 s of call.
        let aliceTask = Task {
            for await case .callStarted(let call) in alice.events() {
                try await eventually(.seconds(20), "Alice's call connects") { call.isConnected }
                try await Task.sleep(for: .seconds(1.5))
                try await call.transfer(to: .queue("Billing"))
            }
        }
        let bobTask = Task {
            for await case .callStarted(let call) in bob.events() {
                try await eventually(.seconds(20), "Bob's call connects") { call.isConnected }
                try await Task.sleep(for: .seconds(2.5))
                await call.hangup()
            }
        }
        defer { aliceTask.cancel(); bobTask.cancel() }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ecv-cli-transfer-\(getpid())")
        try? FileManager.default.removeItem(at: directory)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let record = directory.appendingPathComponent("call.mkv")

        let result = try await ECVProcess.run(["call", "--service-url", base, "--name", "Transferred", "--width", "320", "--height", "240",
                                               "--no-audio-processing", "--record", record.path, "--json"], timeout: .seconds(90))
        #expect(result.status == 0, "a call that ends by the second agent's hangup succeeds: \(result.stderr)")
        let objects = result.stdout.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        func events(_ rtcId: String) -> [String] { objects.filter { $0["rtcId"] as? String == rtcId }.compactMap { $0["event"] as? String } }
        let completed = try #require(objects.first { $0["event"] as? String == "TransferCompleted" }, "\(result.stdout)")
        let first = try #require(completed["rtcId"] as? String)
        let second = try #require((completed["data"] as? [String: String])?["rtcId"])
        #expect(first != second)
        // The first leg's last event is TransferCompleted (Turkish guide §7.1); no CallEnded for it.
        // (The Recording object after it is ecv call's own line, not an event: --record.)
        let firstLeg = events(first).filter { $0 != "Recording" }
        #expect(firstLeg.last == "TransferCompleted" && !firstLeg.contains("CallEnded"), "\(events(first))")

        let secondLeg = events(second)
        #expect(!secondLeg.contains("DialSuccess"), "the transferred leg is never dialed: \(secondLeg)")
        #expect(service.script.dialCount(rtcId: second) == 0)
        for expected in ["AgentConnected", "WebRtcConnected", "CallEnded"] { #expect(secondLeg.contains(expected), "\(expected) in \(secondLeg)") }
        let secondAgent = objects.first { $0["rtcId"] as? String == second && $0["event"] as? String == "AgentConnected" }
        #expect((secondAgent?["data"] as? [String: String])?["agentName"] == "Bob")
        let ends = objects.filter { $0["event"] as? String == "CallEnded" }
        #expect(ends.last?["rtcId"] as? String == second && ends.last?["detail"] as? String == "REMOTE_HANGUP")
        // With --record, each leg's last event (TransferCompleted, CallEnded) is followed by whether its file was written.
        let recordings = objects.filter { $0["event"] as? String == "Recording" }
        #expect(recordings.compactMap { $0["rtcId"] as? String } == [first, second] && recordings.allSatisfy { $0["written"] as? Bool == true },
                "\(recordings)")
        #expect(objects.last?["event"] as? String == "Recording")

        // Each leg's recording: its own file, the agent of that leg in it.
        for file in [record, directory.appendingPathComponent("call-\(second).mkv")] {
            let info = try await RecordingInspector.inspect(file)
            #expect(info.videoTracks.count == 2 && info.audioTracks.count == 2, "\(file.lastPathComponent): \(info.tracks.map(\.caps))")
            #expect(info.videoTracks.allSatisfy { $0.frames > 15 }, "\(file.lastPathComponent): \(info.videoTracks.map(\.frames))")
        }
        await alice.logout()
        await bob.logout()
        await service.stop()
    }

    /// One picture: the agent (320×240) full-frame, whatever size the caller sends (240×320).
    @Test func callRecordsPictureInPictureAtTheAgentsSize() async throws {
        let (service, base) = try await startLoopbackService()
        let agent = try await startLoopbackAgent(named: "Alice", base: base)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ecv-cli-pip-\(getpid())")
        try? FileManager.default.removeItem(at: directory)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let record = directory.appendingPathComponent("pip.webm")
        let refused = try await ECVProcess.run(["call", "--service-url", base, "--record", directory.appendingPathComponent("pip.mp4").path,
                                                "--record-layout", "pip"])
        #expect(refused.status != 0 && refused.stderr.contains("MP4"), "\(refused.stderr)")

        let result = try await ECVProcess.run(["call", "--service-url", base, "--width", "240", "--height", "320", "--no-audio-processing",
                                               "--record", record.path, "--record-layout", "pip", "--duration", "3"], timeout: .seconds(60))
        #expect(result.status == 0, "\(result.stderr)")
        let info = try await RecordingInspector.inspect(record)
        #expect(info.videoTracks.count == 1 && info.audioTracks.count == 1, "one picture, one sound: \(info.tracks.map(\.caps))")
        let video = try #require(info.videoTracks.first)
        #expect(video.mediaType == "video/x-vp8" && video.caps.contains("width=(int)320") && video.caps.contains("height=(int)240"),
                "the agent's size: \(video.caps)")
        #expect(video.frames > 45, "\(video.frames) pictures in 3 s")
        await agent.logout()
        await service.stop()
    }
}

/// A script that reads a few lines and closes the pipe (`ecv call --json | head -3`): `ecv call`
/// hangs up and exits 0 instead of crashing on the write.
@Suite(.serialized) struct ClosedOutputCLITests {
    @Test func callHangsUpWhenItsOutputIsClosed() async throws {
        let (service, base) = try await startLoopbackService()
        let agent = try await startLoopbackAgent(named: "Alice", base: base)
        let process = Process()
        process.executableURL = ECVProcess.executable
        process.arguments = ["call", "--service-url", base, "--width", "320", "--height", "240", "--no-audio-processing", "--json"]
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        let lines = Locked(0)
        try process.run()
        // Like `head`: read three lines and stop reading, then close the pipe once the agent took
        // the call (no read is under way when it closes, so the next write meets a closed pipe).
        PipeReader.read(out.fileHandleForReading) { data in
            let newlines = data.filter { $0 == UInt8(ascii: "\n") }.count
            return lines.withLock { count in count += newlines; return count } < 3
        }
        try await eventually(.seconds(30), "the call reaches the agent") { agent.calls.count == 1 && lines.value >= 3 }
        try out.fileHandleForReading.close()
        try await eventually(.seconds(20), "ecv call exits") { !process.isRunning }
        let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(process.terminationReason == .exit && process.terminationStatus == 0, "\(process.terminationReason) \(process.terminationStatus): \(stderr)")
        #expect(stderr.contains("standard output was closed"), "\(stderr)")
        try await eventually(.seconds(10), "the agent's call ended") { agent.calls.isEmpty }
        await agent.logout()
        await service.stop()
    }
}
