import ECVService
import Foundation
import Testing

/// `ecv demo --bot` and `ecv agent --voice`: a voice bot from the command line, with real speech.
@Suite(.serialized) struct VoiceBotCLITests {
    /// The bot greets, the caller (espeak-ng) asks for billing, the bot (pocketsphinx) hears it
    /// and transfers; the summary lists both sides' lines with times.
    @Test func theBotDemoHearsTheCallerAndTransfers() async throws {
        let (status, stdout, stderr) = try await ECVProcess.run(["demo", "--bot", "--json"], timeout: .seconds(90))
        #expect(status == 0, "\(stderr)\n\(stdout)")
        let lines = stdout.split(separator: "\n")
        let objects = lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(objects.count == lines.count, "only JSON objects: \(stdout)")
        let summary = try #require(objects.last, "\(stdout)")
        #expect(summary["event"] as? String == "summary")
        #expect(summary["transferred"] as? Bool == true)
        let transcript = summary["transcript"] as? [[String: Any]] ?? []
        let said = transcript.map { "\($0["who"] ?? "") \($0["text"] ?? "")" }
        #expect(said.contains { $0.hasPrefix("caller heard") && $0.contains("thank you for calling") }, "\(said)")
        #expect(said.contains { $0.hasPrefix("Ava") && $0.contains("heard") && $0.contains("billing") }, "\(said)")
        #expect(said.contains { $0.hasPrefix("Ava transfer to queue Billing") }, "\(said)")
        #expect(transcript.allSatisfy { ($0["t"] as? Double ?? -1) >= 0 })
    }

    /// The README's command exactly as written: a person's summary, both sides' lines with times.
    @Test func theBotDemoAsTheReadmeShowsIt() async throws {
        let (status, stdout, stderr) = try await ECVProcess.run(["demo", "--bot"], timeout: .seconds(90))
        #expect(status == 0, "\(stderr)\n\(stdout)")
        #expect(stdout.contains("Bot demo summary (transferred to Billing: yes)"), "\(stdout)")
        #expect(stdout.contains("caller heard") && stdout.contains("caller says"), "\(stdout)")
    }

    @Test func voiceFlagsThatCannotWorkAreUsageErrors() async throws {
        let (status, _, stderr) = try await ECVProcess.run(["agent", "--service-url", "http://127.0.0.1:9", "--voice", "--receive-only"],
                                                           timeout: .seconds(20))
        #expect(status == 2, "\(stderr)")
        #expect(stderr.contains("--voice and --receive-only"), "\(stderr)")
        let (badStatus, _, badError) = try await ECVProcess.run(["agent", "--service-url", "http://127.0.0.1:9", "--voice",
                                                                 "--script", "listen, on \"zzzqx\" hangup"], timeout: .seconds(20))
        #expect(badStatus == 1, "\(badError)")
        #expect(badError.contains("not in the dictionary"), "\(badError)")
    }
}
