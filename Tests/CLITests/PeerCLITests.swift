import Foundation
import Testing

/// `ecv demo --peer`, `ecv peer` and `ecv serve --peer-key` as a user runs them.
@Suite(.serialized) struct PeerCLITests {
    @Test func thePeerDemoRunsTheTutorialsFlow() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("peer-demo-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) } // a test's scratch directory: gone either way
        let (status, stdout, stderr) = try await ECVProcess.run(["demo", "--peer", "--json", "--recordings", directory.path], timeout: .seconds(90))
        #expect(status == 0, "\(stderr)")
        let lines = stdout.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] } // other lines fail below
        #expect(lines.count == stdout.split(separator: "\n").count, "only JSON objects: \(stdout)")
        let events = lines.compactMap { $0["event"] as? String }
        #expect(events.starts(with: ["open", "peers", "call", "answer", "stream", "recording", "data", "camera", "mute", "close", "summary"]), "\(events)")
        let summary = try #require(lines.last)
        #expect((summary["framesAliceReceived"] as? Int ?? 0) > 30 && (summary["framesBobReceived"] as? Int ?? 0) > 30, "\(summary)")
        #expect(summary["tracks"] as? Int == 4 && summary["camera"] as? String == "back", "\(summary)")
        let file = try #require(lines.first { $0["event"] as? String == "recording" }?["file"] as? String)
        #expect(file.hasPrefix(directory.appendingPathComponent("peer-call-").path) && FileManager.default.fileExists(atPath: file), "\(file)")
    }

    @Test func peerOptionsAreChecked() async throws {
        for (arguments, message) in [(["peer", "--key", "k"], "--server"), (["peer", "--server", "ftp://x", "--key", "k"], "not an http"),
                                     (["serve", "--open-agents", "--peer-key", "bad key!"], "--peer-key"),
                                     (["serve", "--open-agents", "--peer-discovery"], "need --peer-key")] {
            let (status, _, stderr) = try await ECVProcess.run(arguments)
            #expect(status == 2 && stderr.contains(message), "\(arguments): \(status) \(stderr)")
        }
        let (status, _, stderr) = try await ECVProcess.run(["peer", "--server", "http://127.0.0.1:9/peerjs", "--key", "k", "--id", "a"])
        #expect(status == 1 && stderr.contains("refused"), "an unreachable server: \(stderr)")
    }
}
