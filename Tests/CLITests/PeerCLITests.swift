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

    /// Issue #38 (7): the README's `--serialization` line, run as written (in a network namespace
    /// of its own, so port 8080 is free), against `ecv serve` and an answering `ecv peer` named bob.
    @Test func theReadmeSerializationLineOpensAJSONDataConnection() async throws {
        let readme = try String(contentsOf: ReadmeTourTests.root.appendingPathComponent("README.md"), encoding: .utf8)
        let line = try #require(readme.split(separator: "\n").first { $0.hasPrefix("ecv peer ") && $0.contains("--serialization") })
        let command = String(line.components(separatedBy: "   ")[0])
        let namespace = "ecv-ser-\(getpid())", subnet = 10 + Int(getpid()) % 200
        try shell("ip netns add \(namespace) && ip -n \(namespace) link set lo up && ip -n \(namespace) link add v0 type veth peer name v1 "
            + "&& ip -n \(namespace) addr add 10.252.\(subnet).1/24 dev v0 && ip -n \(namespace) link set v0 up && ip -n \(namespace) link set v1 up")
        defer { _ = try? shell("ip netns del \(namespace)") } // the namespace and its links go with it
        let path = ECVProcess.executable.deletingLastPathComponent().path + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
        func start(_ line: String) throws -> RunningECV {
            try RunningECV(["netns", "exec", namespace, "sh", "-c", "exec " + line], environment: ["PATH": path],
                           executable: URL(fileURLWithPath: "/usr/sbin/ip"))
        }
        let serve = try start("ecv serve --open-agents --peer-key demo --port 8080")
        defer { serve.stop() }
        try await eventually(.seconds(20), "the service's banner") { serve.stdout.contains("peer server") }
        let bob = try start("ecv peer --server http://127.0.0.1:8080/peerjs --key demo --id bob --answer --json --width 320 --height 240 --fps 15")
        defer { bob.stop() }
        try await eventually(.seconds(20), "bob open") { bob.stdout.contains(#""event":"open""#) }
        let caller = try start(command)
        defer { caller.stop() }
        try await eventually(.seconds(40), "bob's echo and stream at the caller") {
            caller.stdout.contains("data from bob: echo: hello") && caller.stdout.contains("stream from bob")
        }
        #expect(bob.stdout.contains(#""serialization":"json""#), "bob's side of the connection is json: \(bob.stdout)")
        kill(caller.pid, SIGTERM)
        #expect(try await caller.exitStatus(within: .seconds(20)) == 0, "\(caller.stdout)\n\(caller.stderr)")
    }
}
