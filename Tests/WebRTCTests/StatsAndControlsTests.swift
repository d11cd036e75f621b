import GLibCore
import GStreamer
import MediaPipeline
import MediaTestSupport
import Testing
@testable import WebRTC

@Suite(.serialized) struct StatsAndControlsTests {
    @Test func statsShowBytesBothWaysWithCorrectKindsAndRTT() async throws {
        let pair = PeerPair(offerer: testMedia(), answerer: testMedia())
        let offeredCandidates = Locked<[String]>([])
        pair.signaling.setFilter { message, towardsFirst in
            if !towardsFirst, case .candidate(_, _, let candidate) = message { offeredCandidates.withLock { $0.append(candidate) } }
            return true
        }
        try await pair.start()
        try await waitFor(.connected, on: pair.offerer)
        // RTCP comes every 50-150 ms, so the RTT can be known before both kinds of media arrived.
        try await eventually(.seconds(15), "RTT from RTCP receiver reports and media of both kinds received") {
            guard let stats = try? await pair.offerer.stats(), stats.roundTripTime != nil else { return false }
            return MediaKind.allCases.allSatisfy { (stats.inbound($0)?.bytesReceived ?? 0) > 0 }
        }
        let stats = try await pair.offerer.stats()
        for kind in MediaKind.allCases {
            #expect((stats.outbound(kind)?.bytesSent ?? 0) > 0, "\(kind) sent")
            #expect((stats.inbound(kind)?.bytesReceived ?? 0) > 0, "\(kind) received; inbound: \(stats.inbound.map { ($0.kind as Any, $0.ssrc, $0.bytesReceived, $0.packetsReceived) })")
        }
        // GStreamer 1.22 labels the audio streams "video"; our SSRC map must not.
        #expect(Set(stats.outbound.compactMap(\.kind)) == [.audio, .video])
        #expect(Set(stats.inbound.compactMap(\.kind)) == [.audio, .video])
        // Local and remote are the far side's remote and local: the pair is followed by its ids,
        // not by GStreamer's (swapped) candidate labels.
        let answererPair = try #require(try await pair.answerer.stats().candidatePair)
        let offererPair = try #require(stats.candidatePair)
        let local = try #require(offererPair.localAddress.flatMap { address in offererPair.localPort.map { (address, $0) } }, "\(offererPair)")
        #expect(offeredCandidates.value.contains { $0.contains(" \(local.0) \(local.1) typ ") },
                "the local end is one the offerer itself offered: \(local) in \(offeredCandidates.value)")
        #expect(offererPair.localAddress == answererPair.remoteAddress && offererPair.localPort == answererPair.remotePort,
                "offerer \(offererPair), answerer \(answererPair)")
        #expect(offererPair.remoteAddress == answererPair.localAddress && offererPair.remotePort == answererPair.localPort,
                "offerer \(offererPair), answerer \(answererPair)")
        try await Task.sleep(for: .seconds(1)) // the window the rates are measured over
        let later = try await pair.offerer.stats()
        let rates = later.bitrates(since: stats)
        #expect((rates.sent[.video] ?? 0) > 10_000 && (rates.received[.audio] ?? 0) > 5_000, "\(rates)")
        for kind in MediaKind.allCases {
            let before = try #require(stats.inbound(kind)), after = try #require(later.inbound(kind))
            #expect(after.packetsReceived > before.packetsReceived + 10, "\(kind): \(before.packetsReceived) → \(after.packetsReceived) packets")
            if let lost = after.packetsLost {
                #expect(Double(lost) <= 0.05 * Double(after.packetsReceived), "\(kind) on loopback: \(lost) of \(after.packetsReceived) lost")
            }
        }
        await pair.close()
    }

    @Test func muteSendsBlackAndSilenceAndUnmuteRestores() async throws {
        let pair = PeerPair(offerer: testMedia(video: .single(.testPattern(pattern: "white"))), answerer: testMedia())
        let atAnswerer = RemoteMedia(pair.answerer)
        try await pair.start()
        try await waitFor(.connected, on: pair.offerer)
        try await eventually(.seconds(10), "white frames and tone") {
            guard let frame = atAnswerer.video.last else { return false }
            return meanColor(frame).red > 200 && atAnswerer.audio.lastRMS > 100
        }
        let media = try #require(await pair.offerer.media)
        try media.setVideoMuted(true)
        try media.setAudioMuted(true)
        try await eventually(.seconds(10), "black frames and silence") {
            guard let frame = atAnswerer.video.last else { return false }
            let color = meanColor(frame)
            return color.red < 25 && color.green < 25 && color.blue < 25 && atAnswerer.audio.lastRMS < 5
        }
        let framesWhileMuted = atAnswerer.video.count
        try await eventually(.seconds(5), "timing continues: frames keep coming while muted") { atAnswerer.video.count > framesWhileMuted + 5 }
        #expect(atAnswerer.video.last.map { meanColor($0).red < 25 } ?? false, "the frames that kept coming are black")
        try media.setVideoMuted(false)
        try media.setAudioMuted(false)
        try await eventually(.seconds(10), "picture and tone again") {
            guard let frame = atAnswerer.video.last else { return false }
            return meanColor(frame).red > 200 && atAnswerer.audio.lastRMS > 100
        }
        await pair.close()
    }

    @Test func cameraSwitchChangesWhatTheFarSideSees() async throws {
        let cameras = VideoInputs.cameras(front: .testPattern(pattern: "red"), back: .testPattern(pattern: "blue"))
        let pair = PeerPair(offerer: testMedia(video: cameras), answerer: testMedia())
        let atAnswerer = RemoteMedia(pair.answerer)
        try await pair.start()
        try await waitFor(.connected, on: pair.offerer)
        @Sendable func dominant() -> String? {
            guard let frame = atAnswerer.video.last else { return nil }
            let color = meanColor(frame)
            return color.red > 150 && color.blue < 100 ? "red" : color.blue > 150 && color.red < 100 ? "blue" : nil
        }
        try await eventually(.seconds(10), "front camera (red) at the far side") { dominant() == "red" }
        let media = try #require(await pair.offerer.media)
        #expect(media.cameras == ["back", "front"])
        #expect(try media.toggleCamera() == "back")
        try await eventually(.seconds(10), "back camera (blue) at the far side") { dominant() == "blue" }
        try media.switchCamera(to: "front")
        try await eventually(.seconds(10), "front again") { dominant() == "red" }
        #expect(throws: MediaRuntimeErrorMatcher.self) { try media.switchCamera(to: "side") }
        await pair.close()
    }

    @Test func loweringTheBitrateLowersMeasuredBytesPerSecond() async throws {
        // Scrolling colour bars: enough detail to fill 1200 kbit/s, compressible enough to go
        // below 250 (pure noise sits at VP8's quantizer floor whatever the target).
        let scrolling = try Preset.parse(name: "scrolling-bars", text: "# kind: video-source\nvideotestsrc is-live=true pattern=smpte horizontal-speed=4\n")
        var sender = testMedia(video: .single(.preset(name: "scrolling-bars")), bitrate: 1200)
        sender.presets = PresetLibrary.builtIn.overriding(with: [scrolling])
        let pair = PeerPair(offerer: sender, answerer: testMedia())
        try await pair.start()
        try await waitFor(.connected, on: pair.offerer)
        func videoRate(over seconds: Double) async throws -> Double {
            let first = try await pair.offerer.stats()
            try await Task.sleep(for: .seconds(seconds))
            return try await pair.offerer.stats().bitrates(since: first).sent[.video] ?? 0
        }
        try await Task.sleep(for: .seconds(1))
        let high = try await videoRate(over: 3)
        let media = try #require(await pair.offerer.media)
        try media.setVideoBitrate(kbps: 250)
        #expect(media.videoBitrateKbps == 250)
        try await Task.sleep(for: .seconds(1.5)) // let the rate controller settle
        let low = try await videoRate(over: 3)
        #expect(high > 800_000, "at 1200 kbit/s the noisy source used \(Int(high)) bit/s")
        #expect(low < high * 0.5, "after lowering to 250 kbit/s: \(Int(low)) bit/s (was \(Int(high)))")
        await pair.close()
    }

    /// libwebrtc's congestion control starts at 300 kbit/s and probes up; so does `.adaptive`:
    /// the configured bitrate is the ceiling, not where the encoder begins.
    @Test func anAdaptingSenderStartsLowAndProbesUpOnACleanPath() async throws {
        var sender = testMedia(bitrate: 1500)
        sender.parameters.lossRecovery = .adaptive
        let pair = PeerPair(offerer: sender, answerer: testMedia())
        try await pair.start()
        let media = try #require(await pair.offerer.media)
        // Set before the pipeline played, so the first frame was encoded at it.
        let start = BandwidthEstimator.defaultStartKbps - PeerConnection.audioAllowanceKbps
        #expect(media.videoBitrateKbps == start, "the encoder's first rate")
        try await waitFor(.connected, on: pair.offerer)
        try await eventually(.seconds(20), "the encoder's rate above the start on a clean loopback path") {
            (media.videoBitrateKbps ?? 0) >= start * 5 / 4
        }
        let decision = try #require(try await pair.offerer.stats().bandwidth)
        #expect(decision.reason == "probe" && decision.targetKbps <= 1500 + PeerConnection.audioAllowanceKbps, "\(decision)")
        await pair.close()
    }

    /// The far end's transport-wide feedback reaches the rate control packet by packet (the
    /// `RTPTWCCPackets` events rtpsession pushes toward the send path), and on a clean loopback
    /// path it shows no queue.
    @Test func anAdaptingSenderReadsTheFarEndsFeedbackPacketByPacket() async throws {
        var sender = testMedia(bitrate: 1500)
        sender.parameters.lossRecovery = .adaptive
        let pair = PeerPair(offerer: sender, answerer: testMedia())
        try await pair.start()
        try await waitFor(.connected, on: pair.offerer)
        try await eventually(.seconds(20), "a queue delay from the far end's transport-wide feedback") {
            await pair.offerer.standingQueue != nil
        }
        let queue = try #require(await pair.offerer.standingQueue)
        #expect(queue >= 0 && queue < BandwidthEstimator.queueCutThreshold, "a clean loopback path read as a \(queue) s queue")
        await pair.close()
    }
}

/// Matches any MediaRuntimeError (the module is not imported here by name).
typealias MediaRuntimeErrorMatcher = any Error
