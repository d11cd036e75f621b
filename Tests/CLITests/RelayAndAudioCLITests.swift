import Foundation
import GLibCore
import MediaTestSupport
import NetworkTestSupport
import Testing

/// `ecv call`/`ecv agent` with `--relay-only` through a real TURN server, and `ecv agent
/// --audio-source` heard by a caller playing on its second output (`useSpeakerPhone = false`).
@Suite(.serialized) struct RelayAndAudioCLITests {
    /// Both processes relay-only, the TURN server (coturn in a lab namespace) on their command
    /// lines: the caller's stats name a relayed pair at both ends, the agent's relay-only making
    /// the far end's candidate a relayed one too.
    @Test(.enabled(if: TurnServer.unavailableReason == nil, "\(TurnServer.unavailableReason ?? "")"))
    func callAndAgentRelayOnlyOnTheCommandLine() async throws {
        let lab = try NetworkLab()
        defer { lab.close() }
        let turn = try await TurnServer(in: lab)
        defer { turn.close() }
        let (service, base) = try await startLoopbackService()
        let turnOptions = ["--relay-only", "--turn", turn.url, "--turn-username", turn.username, "--turn-credential", turn.credential]
        let agent = try RunningECV(["agent", "--service-url", base, "--name", "Bot", "--calls", "1", "--json", "--width", "320", "--height", "240",
                                    "--no-audio-processing"] + turnOptions)
        defer { agent.stop() }
        try await eventually(.seconds(20), "the agent ready") { service.acd.snapshot().agents.first?.state == .ready }
        let result = try await ECVProcess.run(["call", "--service-url", base, "--name", "Relayed", "--duration", "2", "--stats", "--json",
                                               "--width", "320", "--height", "240", "--no-audio-processing"] + turnOptions,
                                              timeout: .seconds(60))
        #expect(result.status == 0, "\(result.stderr)")
        let stats = result.stdout.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }.filter { $0["event"] as? String == "Stats" && ($0["localCandidateType"] as? String ?? "") != "" }
        #expect(!stats.isEmpty, "stats lines with a selected pair: \(result.stdout.suffix(1500))")
        #expect(stats.allSatisfy { $0["localCandidateType"] as? String == "relay" && $0["remoteCandidateType"] as? String == "relay" },
                "\(stats.map { "\($0["localCandidateType"] ?? "?")→\($0["remoteCandidateType"] ?? "?")" })")
        #expect(stats.contains { ($0["receivedVideoBps"] as? Double ?? 0) > 0 }, "media came through the relay")
        #expect(try await agent.exitStatus(within: .seconds(20)) == 0, "the agent ends after --calls 1: \(agent.stderr)")
        await service.stop()
    }

    /// `ecv agent --audio-source tone-440` (its default is a 660 Hz tone), heard by `ecv call
    /// --no-speaker --earpiece SINK` (useSpeakerPhone = false), whose second output is a file: the
    /// far end's tone is in it, at 440 Hz.
    @Test func agentAudioSourcePlaysOnTheCallersEarpiece() async throws {
        let (service, base) = try await startLoopbackService()
        let agent = try RunningECV(["agent", "--service-url", base, "--name", "Bot", "--json", "--width", "160", "--height", "120",
                                    "--no-audio-processing", "--audio-source", "tone-440"])
        defer { agent.stop() }
        try await eventually(.seconds(20), "the agent ready") { service.acd.snapshot().agents.first?.state == .ready }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("ecv-earpiece-\(getpid()).raw")
        try? FileManager.default.removeItem(at: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let earpiece = "audioconvert ! audio/x-raw,format=S16LE,channels=1,rate=48000 ! filesink buffer-mode=unbuffered location=\(file.path)"
        let result = try await ECVProcess.run(["call", "--service-url", base, "--name", "Listener", "--duration", "3", "--width", "160",
                                               "--height", "120", "--no-audio-processing", "--no-speaker", "--earpiece", earpiece],
                                              timeout: .seconds(60))
        #expect(result.status == 0, "\(result.stderr)")
        let samples = try Data(contentsOf: file).withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
        // A second of the far end's audio at least, after the half second left out (the tone's start).
        #expect(samples.count > 48_000 + 24_000, "\(samples.count) samples in the earpiece file")
        let tone = Array(samples.dropFirst(24_000))
        let frequency = Self.frequency(of: tone, sampleRate: 48_000)
        let rms = (tone.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(max(1, tone.count))).squareRoot()
        #expect(rms > 1000, "a tone, not silence: rms \(rms)")
        #expect(abs(frequency - 440) < 25, "the agent's --audio-source tone-440, not its default 660 Hz: \(frequency) Hz")
        await service.stop()
    }

    /// Zero crossings (with a little hysteresis) per second, halved: a pure tone's frequency.
    static func frequency(of samples: [Int16], sampleRate: Double) -> Double {
        var crossings = 0
        var positive = (samples.first ?? 0) >= 0
        for sample in samples {
            if positive && sample < -200 { positive = false; crossings += 1 } else if !positive && sample > 200 { positive = true; crossings += 1 }
        }
        return Double(crossings) / 2 / (Double(samples.count) / sampleRate)
    }
}
