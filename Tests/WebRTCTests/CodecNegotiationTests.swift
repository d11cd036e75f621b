import GLibCore
import GStreamer
import MediaPipeline
import MediaTestSupport
import Testing
@testable import WebRTC

/// Two ECVKit ends that prefer different video codecs: the offer lists every codec, the answer
/// takes the offer's first one the answerer handles, and both ends send and receive it.
@Suite(.serialized) struct CodecNegotiationTests {
    static let mixes: [(offerer: String, answerer: String)] = [("H264", "VP8"), ("VP8", "VP9"), ("VP9", "H264")]

    @Test(arguments: mixes)
    func theOfferersPreferenceIsSentBothWays(offerer: String, answerer: String) async throws {
        let pair = PeerPair(offerer: testMedia(codec: offerer), answerer: testMedia(codec: answerer))
        let atAnswerer = RemoteMedia(pair.answerer), atOfferer = RemoteMedia(pair.offerer)
        let streams = Locked<[String]>([])
        let events = pair.answerer.events(), offererEvents = pair.offerer.events()
        let watch = Task { for await case .remoteStream(let stream) in events where stream.kind == .video { streams.withLock { $0.append("answerer got \(stream.encodingName)") } } }
        let watch2 = Task { for await case .remoteStream(let stream) in offererEvents where stream.kind == .video { streams.withLock { $0.append("offerer got \(stream.encodingName)") } } }
        try await pair.start()
        try await waitFor(.connected, on: pair.offerer)
        try await eventually(.seconds(10), "video both ways") { atAnswerer.video.count > 15 && atOfferer.video.count > 15 }
        #expect(Set(streams.value) == ["answerer got \(offerer)", "offerer got \(offerer)"])
        #expect(await pair.offerer.negotiatedCodecs[.video]?.encodingName == offerer)
        #expect(await pair.answerer.negotiatedCodecs[.video]?.encodingName == offerer)
        #expect(await pair.answerer.media?.videoEncodingName == offerer)
        watch.cancel(); watch2.cancel()
        await pair.close()
    }

    @Test func anAllowlistWithNothingInCommonIsReportedOnBothEnds() async throws {
        var only264 = testMedia(codec: "H264")
        only264.parameters.videoCodecs = ["H264"]
        var onlyVP8 = testMedia(codec: "VP8")
        onlyVP8.parameters.videoCodecs = ["VP8"]
        let pair = PeerPair(offerer: only264, answerer: onlyVP8)
        let events = pair.answerer.events(), offererEvents = pair.offerer.events()
        let atAnswerer = Task { for await case .noCommonCodec(let kind, let ours, let theirs) in events { return "\(kind.rawValue) ours=\(ours) theirs=\(theirs)" }; return "" }
        let atOfferer = Task { for await case .noCommonCodec(let kind, let ours, _) in offererEvents { return "\(kind.rawValue) ours=\(ours)" }; return "" }
        try await pair.start()
        #expect(try await value(of: atAnswerer, within: .seconds(10), "the answerer's noCommonCodec") == "video ours=[\"VP8\"] theirs=[\"H264\"]")
        #expect(try await value(of: atOfferer, within: .seconds(10), "the offerer's noCommonCodec") == "video ours=[\"H264\"]")
        await pair.close()
    }
}

/// A far end that negotiates video and never sends a frame is reported on both ends, once.
@Suite(.serialized) struct MediaSilenceTests {
    @Test func videoNegotiatedButNeverSentIsReportedOnBothEnds() async throws {
        let silent = testMedia(video: .single(.app(name: "never_fed")))
        let pair = PeerPair(offerer: testMedia(), answerer: silent)
        let atOfferer = pair.offerer.events(), atAnswerer = pair.answerer.events()
        let offererReports = Task { var seen: [String] = []; for await case .mediaSilent(let direction, let ever) in atOfferer { seen.append("\(direction) \(ever)") }; return seen }
        let answererReports = Task { var seen: [String] = []; for await case .mediaSilent(let direction, let ever) in atAnswerer { seen.append("\(direction) \(ever)") }; return seen }
        let offererMedia = RemoteMedia(pair.offerer)
        try await pair.start()
        try await waitFor(.connected, on: pair.offerer)
        // The silence bar is 5 s; a report more would show within the next liveness ticks.
        try await Task.sleep(for: MediaDirectionWatch.silence + .seconds(2))
        await pair.close()
        #expect(offererMedia.video.count == 0 && offererMedia.audio.count > 0)
        #expect(await offererReports.value == ["video received false"])
        #expect(await answererReports.value == ["video sent false"])
    }

    @Test func aDirectionThatStopsIsReportedOnceAfterTheSilenceBar() {
        var watch = MediaDirectionWatch()
        let start = ContinuousClock.now
        let video = MediaDirection(kind: .video, sending: false), audio = MediaDirection(kind: .audio, sending: true)
        watch.expect([video, audio], now: start)
        #expect(watch.check(counts: [video: 10, audio: 10], now: start + .seconds(1)).isEmpty)
        #expect(watch.check(counts: [video: 10, audio: 20], now: start + .seconds(5)).isEmpty)
        let reported = watch.check(counts: [video: 10, audio: 30], now: start + .seconds(6))
        #expect(reported.map { "\($0.0) \($0.everCarried)" } == ["video received true"])
        #expect(watch.check(counts: [video: 10, audio: 40], now: start + .seconds(30)).isEmpty, "once")
        watch.pause(now: start + .seconds(40))
        watch.expect([video, audio], now: start + .seconds(41))
        #expect(watch.check(counts: [video: 10, audio: 50], now: start + .seconds(45)).isEmpty, "a new negotiation starts the clock again")
    }
}
