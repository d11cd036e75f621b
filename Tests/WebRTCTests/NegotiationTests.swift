import GLibCore
import GStreamer
import MediaPipeline
import MediaTestSupport
import Testing
@testable import WebRTC

@Suite(.serialized) struct NegotiationTests {
    /// The offerer's candidates reach the answerer before its offer does; they are queued and
    /// applied once the remote description is set.
    @Test func candidatesBeforeTheRemoteDescriptionStillConnect() async throws {
        _ = TestRuntime.ready
        let held = Locked<[SignalingMessage]>([])
        let offerGathered = Locked(false)
        let answererBox = Locked<PeerConnection?>(nil)
        let offererBox = Locked<PeerConnection?>(nil)
        let offerer = PeerConnection(configuration: PeerConfiguration(media: testMedia()), role: .offerer) { message in
            held.withLock { $0.append(message) }
        }
        let answerer = PeerConnection(configuration: PeerConfiguration(media: testMedia()), role: .answerer) { message in
            Task { await offererBox.value?.receive(message) }
        }
        answererBox.withLock { $0 = answerer }
        offererBox.withLock { $0 = offerer }
        let offererEvents = offerer.events()  // subscribed now: nothing it waits for can come first
        let watcher = Task {
            for await case .iceGatheringStateChanged(.complete) in offererEvents { offerGathered.withLock { $0 = true }; return }
        }
        try await answerer.start()
        try await offerer.start()
        try await eventually(.seconds(10), "offerer gathered its candidates") { offerGathered.value }
        let messages = held.value
        let candidates = messages.filter { if case .candidate = $0 { true } else { false } }
        let offer = try #require(messages.first { if case .offer = $0 { true } else { false } })
        #expect(!candidates.isEmpty)
        for candidate in candidates { await answerer.receive(candidate) }
        await answerer.receive(offer)
        try await waitFor(.connected, on: answerer)
        try await waitFor(.connected, on: offerer)
        watcher.cancel()
        await offerer.close()
        await answerer.close()
    }

    @Test func vanishedRemoteIsReportedWithinBoundedTime() async throws {
        let pair = PeerPair(offerer: testMedia(), answerer: testMedia()) { configuration in
            configuration.disconnectedAfter = .seconds(2)
            configuration.failedAfter = .seconds(5)
        }
        try await pair.start()
        try await waitFor(.connected, on: pair.offerer)
        // The remote disappears without a word: no bye, no more signaling.
        pair.signaling.setFilter { _, _ in false }
        await pair.answerer.close()
        let started = ContinuousClock.now
        try await waitFor(.disconnected, on: pair.offerer, timeout: .seconds(8))
        try await waitFor(.failed, on: pair.offerer, timeout: .seconds(10))
        #expect(ContinuousClock.now - started < .seconds(9))
        await pair.offerer.close()
    }

    @Test func rebuildingThePeerReconnectsMedia() async throws {
        let pair = PeerPair(offerer: testMedia(), answerer: testMedia())
        let atAnswerer = RemoteMedia(pair.answerer), atOfferer = RemoteMedia(pair.offerer)
        let config = DataChannelConfig(enabled: true, label: "textchannel")
        try await pair.start(dataChannels: [config])
        let channel = await pair.answerer.openDataChannel(config)
        try await waitFor(.connected, on: pair.offerer)
        try await eventually(.seconds(10), "frames before rebuild") { atAnswerer.video.count > 10 && channel.isOpen }
        let answererEvents = pair.answerer.events()  // subscribed now: nothing it waits for can come first
        let rebuilt = Task { for await case .rebuilt(let count) in answererEvents { return count }; return 0 }
        try await pair.offerer.rebuild()
        #expect(try await value(of: rebuilt, within: .seconds(15), "the answerer's rebuild") == 1, "the answerer rebuilt itself for the new offer")
        try await waitFor(.connected, on: pair.offerer)
        let before = (atAnswerer.video.count, atOfferer.video.count, atAnswerer.audio.count, atOfferer.audio.count)
        // Audio too: a send branch that saw the new webrtcbin before it was up would stay stopped.
        try await eventually(.seconds(15), "frames and samples after rebuild, both ways") {
            atAnswerer.video.count > before.0 + 30 && atOfferer.video.count > before.1 + 30
                && atAnswerer.audio.count > before.2 + 50 && atOfferer.audio.count > before.3 + 50
        }
        // The same data channel handle carries on over the new webrtcbin.
        let channelEvents = channel.events()  // subscribed now: nothing it waits for can come first
        let received = Task { for await case .text(let text) in channelEvents { return text }; return "" }
        let offerSide = await pair.offerer.openDataChannel(config)
        try await eventually(.seconds(10), "channel reopened") { offerSide.isOpen }
        try offerSide.send("after-rebuild")
        #expect(try await value(of: received, within: .seconds(10), "text after the rebuild") == "after-rebuild")
        await pair.close()
    }

    /// Both peers connect on host candidates with libnice's UPnP port mapping switched off.
    @Test func iceAgentsConnectWithoutUPnP() async throws {
        let media = testMedia(videoEnabled: false)
        let pair = PeerPair(offerer: media, answerer: media)
        try await pair.start()
        try await waitFor(.connected, on: pair.offerer)
        for peer in [pair.offerer, pair.answerer] {
            let webrtc = try #require(await peer.session?.webrtc)
            let agent = try #require(try webrtc.get("ice-agent").objectValue?.get("agent").objectValue)
            #expect(try agent.get("upnp").boolValue == false)
        }
        await pair.close()
    }

    /// An audio-only answerer sending pre-encoded media and its offerer, wired to each other
    /// (neither started), with the answer the answerer sends once it has.
    private static func preEncodedAnswerer() -> (offerer: PeerConnection, answerer: PeerConnection, answer: Locked<String?>) {
        _ = TestRuntime.ready
        var configuration = PeerConfiguration(media: testMedia(videoEnabled: false))
        configuration.media.sendsPreEncodedMedia = true
        let offererBox = Locked<PeerConnection?>(nil)
        let answer = Locked<String?>(nil)
        let answerer = PeerConnection(configuration: configuration, role: .answerer) { message in
            if case .answer(let sdp) = message { answer.withLock { $0 = sdp } }
            Task { await offererBox.value?.receive(message) }
        }
        let offerer = PeerConnection(configuration: PeerConfiguration(media: testMedia(videoEnabled: false)), role: .offerer) { message in
            Task { await answerer.receive(message) }
        }
        offererBox.withLock { $0 = offerer }
        return (offerer, answerer, answer)
    }

    /// An offer that comes before our first encoded buffer (an application pushing pre-encoded
    /// media) is answered naming the SSRC of the stream we send. The payloader announces its caps
    /// (and in them its SSRC) from the source's caps before any buffer, and the link to webrtcbin
    /// carries them at once (`linkOutputs(announcingCaps:)`), so the answer need not wait for the
    /// first buffer. A far end that routes by the signalled SSRCs (Pion) drops a stream the answer
    /// does not name: against Pion's bots an answer made before the caps lost 15 of 30 calls their
    /// streams.
    @Test func answerToAnEarlyOfferNamesTheSentStream() async throws {
        let (offerer, answerer, answer) = Self.preEncodedAnswerer()
        try await answerer.start()
        try await offerer.start()
        try await eventually(.seconds(10), "the answer went out") { answer.value != nil }
        let sent = try #require(await answerer.outgoingRTPTee(.audio)?.staticPad("sink")?.currentCaps?.structures.first?.uint("ssrc"))
        let ssrcs = SDPInspection.ssrcKinds(try #require(answer.value))
        #expect(ssrcs[sent] == .audio, "the answer names the SSRC the payloader sends with (\(sent)): \(ssrcs)")
        await offerer.close()
        await answerer.close()
    }

    /// An answerer links its outputs to webrtcbin when the offer comes, and webrtcbin's pads
    /// learn a stream's caps only with the next buffer that crosses the link: a frame or an audio
    /// packet later, on every call's set-up. The link announces them at once, so an answerer
    /// whose source sent one buffer before the offer and nothing since answers naming that
    /// stream; without the announcement the answer waited for caps that never came until the
    /// wait's 3 s bound, and then named no audio SSRC.
    @Test func answerNamesAStreamWhoseNextBufferIsFarOff() async throws {
        let (offerer, answerer, answer) = Self.preEncodedAnswerer()
        try await answerer.start()
        // One frame from the application, then nothing: the stream's caps reach the tee in front
        // of webrtcbin, which is not linked to it yet.
        let source = try #require(await answerer.media?.elements.elements[PreEncodedSend.audioSource])
        let opusSilence: [UInt8] = [0xF8, 0xFF, 0xFE]  // one 20 ms Opus frame (RFC 6716 §3)
        try AppSource(source).push(opusSilence, pts: nil, duration: 20_000_000)
        let teeInput = try #require(await answerer.outgoingRTPTee(.audio)?.staticPad("sink"))
        try await eventually(.seconds(10), "the frame payloaded") { teeInput.currentCaps != nil }
        try await offerer.start()
        try await eventually(.seconds(10), "the answer went out") { answer.value != nil }
        let ssrcs = SDPInspection.ssrcKinds(try #require(answer.value))
        #expect(ssrcs.contains { $0.key != 0 && $0.value == .audio }, "the answer names the audio stream's SSRC")
        await offerer.close()
        await answerer.close()
    }

    /// An offerer fed by the application, whose first buffers come once `start()` has returned,
    /// offers when they have been encoded, naming its audio stream. The offer waits for the send
    /// pads' caps, and an encoder sets them with its first frame; that wait held `start()`, so the
    /// application could not push until it had run out (3 s) and the offer named no stream.
    @Test func applicationFedOffererOffersItsStreamsOnceTheyCome() async throws {
        let parameters = MediaParameters(videoCallEnabled: true, useSpeakerPhone: false, videoWidth: 320, videoHeight: 240, videoFps: 30)
        let caller = MediaConfiguration(parameters: parameters, video: .single(.app(name: "app_camera")), audio: .app(name: "app_microphone"))
        let pair = PeerPair(offerer: caller, answerer: testMedia(audio: .silence))
        let offererEvents = pair.offerer.events()  // subscribed now: nothing it waits for can come first
        let offered = Task { () -> String? in for await case .sentOffer(let sdp) in offererEvents { return sdp }; return nil }
        try await pair.start()
        let media = try #require(await pair.offerer.media)
        let camera = try AppSource(try #require(media.elements.elements["app_camera"]))
        let microphone = try AppSource(try #require(media.elements.elements["app_microphone"]))
        let feeding = Task { try await FlashBeep.feed(video: camera, audio: microphone, audioDelayMs: 0, for: .seconds(20)) }
        defer { feeding.cancel() }
        let sdp = try #require(try await value(of: offered, within: .seconds(10), "the offer went out"))
        // The video's format is chosen by the answer, so only the audio stream has its SSRC yet.
        let kinds = Set(SDPInspection.ssrcKinds(sdp).filter { $0.key != 0 }.values)
        #expect(kinds.contains(.audio), "the offer names the audio stream's SSRC: \(kinds)")
        try await waitFor(.connected, on: pair.answerer)
        await pair.close()
    }

    /// An offerer whose held-back video (linked once the answer names its codec) has no caps yet
    /// when the offer goes out, and has them when the answer comes, makes one offer: the answer
    /// covers that video. A second offer made for it narrowed the video to the answered codec,
    /// which a far end whose preferences allow another codec refuses (aiortc preferring H.264:
    /// "Failed to set remote video description send parameters", in a CI run whose video
    /// encoder started after the offer under load).
    @Test func videoWithCapsOnlyAfterTheOfferBringsNoSecondOffer() async throws {
        _ = TestRuntime.ready
        // The offerer's camera decodes what arrives on a UDP port: no caps until a packet comes.
        let port = try freeLocalPort(udp: true)
        let camera = try Preset.parse(name: "udp-camera", text: """
            # kind: video-source
            udpsrc address=127.0.0.1 port=\(port) ! application/x-rtp,media=video,encoding-name=VP8,clock-rate=90000,payload=96 \
            ! rtpvp8depay ! vp8dec ! videorate ! video/x-raw,framerate=30/1
            """)
        var callerMedia = testMedia(video: .single(.preset(name: "udp-camera")))
        callerMedia.presets = PresetLibrary.builtIn.overriding(with: [camera])
        let (towardsAnswerer, toAnswerer) = AsyncStream.makeStream(of: SignalingMessage.self)
        let (towardsOfferer, toOfferer) = AsyncStream.makeStream(of: SignalingMessage.self)
        let offerer = PeerConnection(configuration: PeerConfiguration(media: callerMedia), role: .offerer, sendSignaling: { toAnswerer.yield($0) })
        let answerer = PeerConnection(configuration: PeerConfiguration(media: testMedia()), role: .answerer, sendSignaling: { toOfferer.yield($0) })
        let atAnswerer = RemoteMedia(answerer)
        let offererEvents = offerer.events()  // subscribed now: nothing it counts can come first
        let offers = Locked(0)
        let counting = Task { for await case .sentOffer(_) in offererEvents { offers.withLock { $0 += 1 } } }
        defer { counting.cancel() }
        let backward = Task { for await message in towardsOfferer { await offerer.receive(message) } }
        defer { backward.cancel() }
        let feed = try Pipeline(launch: "videotestsrc is-live=true ! video/x-raw,width=320,height=240,framerate=30/1 "
                                + "! vp8enc deadline=1 ! rtpvp8pay pt=96 ! udpsink host=127.0.0.1 port=\(port)")
        defer { feed.stop() }
        // A call's text channel, as the agent bot opens it.
        let channel = DataChannelConfig(enabled: true, label: "textchannel")
        try await answerer.start(dataChannels: [channel])
        try await offerer.start(dataChannels: [channel])
        // The offer goes out before the camera has caps; they come with the feed started now,
        // and the offer reaches the answerer (so the answer comes back) once they are there.
        let forward = Task {
            for await message in towardsAnswerer {
                if case .offer = message {
                    // webrtcbin asks for negotiation again while the offer runs (for the text
                    // channel, in most calls): the answer then looks at what changed meanwhile.
                    await offerer.perform { await $0.negotiate() }
                    try? await feed.play()
                    try? await eventually(.seconds(10), "the held-back video's caps") {
                        await offerer.perform { peer in
                            peer.session?.localSignature(channels: peer.channels).outputs.allSatisfy { $0.mediaType != nil } ?? false
                        } ?? false
                    }
                }
                await answerer.receive(message)
            }
        }
        defer { forward.cancel() }
        try await waitFor(.connected, on: offerer)
        try await eventually(.seconds(15), "the offerer's video at the answerer") { atAnswerer.video.count > 30 }
        #expect(offers.value == 1, "offers sent: \(offers.value)")
        await offerer.close()
        await answerer.close()
    }

    /// What makes an offer stale once its answer is in: a linked output whose caps came after it
    /// (the offer named no stream for it) or a new data channel; not a held-back output linked
    /// since, whatever it carries.
    @Test func anOfferIsStaleOnlyForWhatItDescribed() {
        let offered = SendSignature(outputs: [.init(linked: false, mediaType: nil), .init(linked: true, mediaType: nil)], channels: ["textchannel"])
        let videoLinked = SendSignature(outputs: [.init(linked: true, mediaType: "application/x-rtp"), .init(linked: true, mediaType: nil)],
                                        channels: ["textchannel"])
        #expect(!offered.isOutdated(by: videoLinked))
        var audioCaps = videoLinked
        audioCaps.outputs[1].mediaType = "application/x-rtp"
        #expect(offered.isOutdated(by: audioCaps))
        var newChannel = videoLinked
        newChannel.channels.append("files")
        #expect(offered.isOutdated(by: newChannel))
    }

    @Test func malformedRemoteOfferIsAnErrorNotACrash() async throws {
        let pair = PeerPair(offerer: testMedia(), answerer: testMedia())
        let answererEvents = pair.answerer.events()  // subscribed now: nothing it waits for can come first
        let errors = Task { for await case .error(let message) in answererEvents { return message }; return "" }
        try await pair.answerer.start()
        await pair.answerer.receive(.offer(sdp: "this is not SDP"))
        #expect(try await value(of: errors, within: .seconds(10), "an error for the malformed offer").contains("SDP"))
        #expect(await pair.answerer.peerState != .connected)
        await pair.close()
    }
}
