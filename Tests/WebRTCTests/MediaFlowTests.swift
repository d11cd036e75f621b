import GLibCore
import GStreamer
import MediaPipeline
import MediaTestSupport
import Testing
@testable import WebRTC

/// Media flows both ways through real webrtcbin peers on loopback, for every codec.
@Suite(.serialized) struct MediaFlowTests {
    @Test(arguments: ["VP8", "VP9", "H264"])
    func videoAndAudioFlowBothWays(codec: String) async throws {
        let pair = PeerPair(offerer: testMedia(codec: codec), answerer: testMedia(codec: codec))
        let atOfferer = RemoteMedia(pair.offerer), atAnswerer = RemoteMedia(pair.answerer)
        try await pair.start()
        try await waitFor(.connected, on: pair.offerer)
        try await eventually(.seconds(10), "first frames both ways") { atOfferer.video.count > 0 && atAnswerer.video.count > 0 }
        let (offererProbe, offererSent) = try await countBuffers(leaving: .videoEncoder, of: pair.offerer)
        let (answererProbe, answererSent) = try await countBuffers(leaving: .videoEncoder, of: pair.answerer)
        let receivedBefore = (atOfferer.video.count, atAnswerer.video.count)
        try await Task.sleep(for: .seconds(3))
        let sent = (offererSent.count, answererSent.count)
        try await Task.sleep(for: .milliseconds(400)) // frames still in flight at the end of the window
        let received = (atAnswerer.video.count - receivedBefore.1, atOfferer.video.count - receivedBefore.0)
        offererProbe.cancel(); answererProbe.cancel()
        #expect(sent.0 >= 60 && sent.1 >= 60, "senders encoded \(sent)")
        #expect(Double(received.0) >= 0.9 * Double(sent.0), "\(codec): answerer got \(received.0) of \(sent.0)")
        #expect(Double(received.1) >= 0.9 * Double(sent.1), "\(codec): offerer got \(received.1) of \(sent.1)")
        #expect(atOfferer.audio.count > 50 && atAnswerer.audio.count > 50)
        let frame = try #require(atAnswerer.video.last)
        #expect(frame.width == 320 && frame.height == 240 && frame.format == "RGBA")
        let stats = try await pair.offerer.stats()
        #expect(stats.codecMimeTypes == ["video/\(codec)", "audio/OPUS"])
        await pair.close()
    }

    @Test func audioOnlyCallFlowsBothWays() async throws {
        let media = testMedia(videoEnabled: false)
        let pair = PeerPair(offerer: media, answerer: media)
        let atOfferer = RemoteMedia(pair.offerer), atAnswerer = RemoteMedia(pair.answerer)
        try await pair.start()
        try await waitFor(.connected, on: pair.answerer)
        try await eventually(.seconds(10), "first audio both ways") { atOfferer.audio.count > 0 && atAnswerer.audio.count > 0 }
        let (probe, sent) = try await countBuffers(leaving: .audioEncoder, of: pair.offerer)
        let before = atAnswerer.audio.count
        try await Task.sleep(for: .seconds(2))
        let encoded = sent.count
        try await Task.sleep(for: .milliseconds(400))
        probe.cancel()
        let decoded = atAnswerer.audio.count - before
        #expect(encoded >= 80, "20 ms Opus frames in 2 s")
        #expect(Double(decoded) >= 0.9 * Double(encoded), "answerer decoded \(decoded) of \(encoded)")
        #expect(atOfferer.video.count == 0)
        #expect(atAnswerer.audio.lastRMS > 100, "the test tone is audible")
        let stats = try await pair.answerer.stats()
        #expect(stats.outbound(.video) == nil && stats.inbound(.video) == nil)
        await pair.close()
    }

    @Test func answererKeepsItsCodecWhenTheOfferHasIt() async throws {
        let pair = PeerPair(offerer: testMedia(codec: "H264"), answerer: testMedia(codec: "H264"))
        let answers = Locked<[String]>([])
        let answererEvents = pair.answerer.events()  // subscribed now: nothing it waits for can come first
        let task = Task { for await case .sentAnswer(let sdp) in answererEvents { answers.withLock { $0.append(sdp) } } }
        try await pair.start()
        try await waitFor(.connected, on: pair.answerer)
        let answer = try #require(answers.value.first)
        #expect(answer.contains("H264/90000"))
        #expect(!answer.contains("VP8/90000"))
        task.cancel()
        await pair.close()
    }
}

/// A peer that only receives (an agent bot that records) works for every codec, as offerer and answerer.
@Suite(.serialized) struct ReceiveOnlyTests {
    @Test(arguments: ["VP8", "VP9", "H264"])
    func receiveOnlyAnswererGetsVideo(codec: String) async throws {
        var listener = testMedia(codec: codec)
        listener.sendsMedia = false
        let pair = PeerPair(offerer: testMedia(codec: codec), answerer: listener)
        let atAnswerer = RemoteMedia(pair.answerer)
        try await pair.start()
        try await waitFor(.connected, on: pair.answerer)
        try await eventually(.seconds(10), "\(codec) frames at the receive-only side") { atAnswerer.video.count > 20 }
        await pair.close()
    }

    /// A receive-only offer names Opus as RFC 7587 writes it, `opus/48000/2`: libwebrtc refuses an
    /// Opus line without its channel count, so Chromium, answering a recording bot's offer that
    /// lacked it, sent video and no audio (3 of 3 calls in `bench-call lip-sync`).
    @Test func receiveOnlyOfferNamesOpusWithTwoChannels() async throws {
        var listener = testMedia()
        listener.sendsMedia = false
        let peer = PeerConnection(configuration: PeerConfiguration(media: listener), role: .offerer) { _ in }
        let events = peer.events()
        try await peer.start()
        let offer = try await withTimeout(.seconds(15), "the receive-only offer") {
            for await event in events { if case .sentOffer(let sdp) = event { return sdp } }
            return ""
        }
        await peer.close()
        let opus = offer.split(whereSeparator: \.isNewline).filter { $0.hasPrefix("a=rtpmap:") && $0.uppercased().contains(" OPUS/") }
        #expect(opus.map { $0.uppercased().hasSuffix(" OPUS/48000/2") } == [true], "\(opus)")
    }

    /// The sender hears no media from a receive-only far end, only its receiver reports: that is
    /// enough to stay connected (liveness once counted inbound media bytes, so the caller of a
    /// recording bot went disconnected after 3 s and failed after 10 s).
    @Test func senderToReceiveOnlyPeerStaysConnected() async throws {
        var listener = testMedia()
        listener.sendsMedia = false
        let pair = PeerPair(offerer: testMedia(), answerer: listener) { configuration in
            configuration.disconnectedAfter = .seconds(2)
            configuration.failedAfter = .seconds(4)
        }
        let states = pair.offerer.events()
        try await pair.start()
        try await waitFor(.connected, on: pair.offerer)
        let lost = Task {
            for await case .stateChanged(let state) in states where state == .disconnected || state == .failed { return true }
            return false
        }
        try await Task.sleep(for: .seconds(6))
        await pair.close()
        #expect(await lost.value == false, "the sender stayed connected for 6 s of a receive-only far end")
    }

    @Test(arguments: ["VP8", "H264"])
    func receiveOnlyOffererGetsVideo(codec: String) async throws {
        var listener = testMedia(codec: codec)
        listener.sendsMedia = false
        let pair = PeerPair(offerer: listener, answerer: testMedia(codec: codec))
        let atOfferer = RemoteMedia(pair.offerer)
        try await pair.start()
        try await waitFor(.connected, on: pair.offerer)
        try await eventually(.seconds(10), "\(codec) frames at the receive-only side") { atOfferer.video.count > 20 }
        await pair.close()
    }
}
