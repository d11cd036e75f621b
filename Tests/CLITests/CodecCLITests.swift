import ECV
import ECVAgent
import Foundation
import Testing

/// `ecv call --codec … --codec-only`: the allowlist decides, and a call with no codec in common
/// fails loudly instead of connecting without video.
@Suite(.serialized) struct CodecCLITests {
    @Test func anAllowlistAgainstAnEndThatCannotDoItEndsWithNoCommonCodec() async throws {
        let (service, base) = try await startLoopbackService()
        let bot = try await startLoopbackAgent(named: "VP8 only", base: base) { $0.parameters.videoCodecs = ["VP8"] }
        let result = try await ECVProcess.run(["call", "--service-url", base, "--width", "320", "--height", "240", "--no-audio-processing",
                                               "--codec", "H264", "--codec-only", "--duration", "3", "--json"], timeout: .seconds(60))
        #expect(result.status != 0)
        let last = result.stderr.split(separator: "\n").last ?? ""
        #expect(last.hasPrefix("ecv call: ") && last.contains("NO_COMMON_CODEC") && last.contains("H264") && last.contains("VP8"), "\(result.stderr)")
        let events = result.stdout.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        let names = events.compactMap { $0["event"] as? String }
        #expect(names.contains("Error") && names.contains("CallEnded") && !names.contains("WebRtcConnected"), "\(names)")
        await bot.logout()
        await service.stop()
    }

    /// A list with an empty entry, or --codec-only without a codec, is bad usage before dialing.
    @Test func malformedCodecListsAreUsageErrors() async throws {
        for (words, message) in [(["--codec", "H264,"], "comma-separated list"), (["--codec", "H264,,VP9"], "comma-separated list"),
                                 (["--codec-only"], "--codec-only needs --codec")] {
            let result = try await ECVProcess.run(["call", "--service-url", "http://127.0.0.1:9"] + words)
            #expect(result.status == 2 && result.stderr.contains(message), "\(words): \(result.stderr)")
        }
    }

    @Test func anAllowlistAgainstADefaultEndPicksItsCodec() async throws {
        let (service, base) = try await startLoopbackService()
        let bot = try await startLoopbackAgent(named: "Default", base: base)
        let result = try await ECVProcess.run(["call", "--service-url", base, "--width", "320", "--height", "240", "--no-audio-processing",
                                               "--codec", "H264", "--codec-only", "--duration", "2", "--json"], timeout: .seconds(60))
        #expect(result.status == 0, "\(result.stderr)")
        let events = result.stdout.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        let connected = events.first { $0["event"] as? String == "WebRtcConnected" }
        let data = connected?["data"] as? [String: Any]
        #expect((data?["videoCodec"] as? String)?.hasPrefix("H264/") == true, "\(connected ?? [:])")
        let streams = events.filter { $0["event"] as? String == "GotRemoteStream" }.compactMap { ($0["data"] as? [String: Any])?["codec"] as? String }
        #expect(streams.contains("H264"), "\(streams)")
        await bot.logout()
        await service.stop()
    }
}

/// `ecv call` exits 1 when a direction the call negotiated never carried media: here an agent
/// whose video is negotiated and never fed.
@Suite(.serialized) struct SilentDirectionCLITests {
    @Test func aCallWhoseNegotiatedVideoNeverArrivesExitsNonZero() async throws {
        let (service, base) = try await startLoopbackService()
        let bot = try await startLoopbackAgent(named: "Silent video", base: base) { $0.video = .single(.app(name: "never_fed")) }
        let result = try await ECVProcess.run(["call", "--service-url", base, "--width", "320", "--height", "240", "--no-audio-processing",
                                               "--duration", "7"], timeout: .seconds(60))
        #expect(result.status == 1, "\(result.stderr)")
        let last = result.stderr.split(separator: "\n").last ?? ""
        #expect(last == "ecv call: the call ended without media it had negotiated: no video received at all", "\(result.stderr)")
        #expect(result.stdout.contains("ended: LOCAL_HANGUP"), "\(result.stdout)")
        await bot.logout()
        await service.stop()
    }
}
