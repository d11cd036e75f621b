import ECVRecording
import Foundation
import GLibCore
import GStreamer
import MediaPipeline
import MediaRuntime
import MediaTestSupport
import Testing
@testable import WebRTC

/// Recording real loopback calls to real files, checked with gst-discoverer-1.0 and by demuxing.
@Suite(.serialized) struct RecordingCallTests {
    /// The remote party answers seconds after the recording started (webrtcbin holds what we send
    /// until then): its media lands where it happened, and our own media is not shifted by the
    /// time the connection took (every track on the call pipeline's clock), so both parties end
    /// together at the file's end.
    @Test(arguments: [PeerConnection.Role.offerer, .answerer])
    func aLateRemoteLinesUpWithLocalMedia(recordingSide: PeerConnection.Role) async throws {
        _ = TestRuntime.ready
        let held = Locked<[SignalingMessage]?>([])
        let peers = Locked<(offerer: PeerConnection?, answerer: PeerConnection?)>((nil, nil))
        let offerer = PeerConnection(configuration: PeerConfiguration(media: testMedia()), role: .offerer) { message in
            let deliverNow = held.withLock { queue -> Bool in
                guard queue != nil else { return true }
                queue?.append(message)
                return false
            }
            if deliverNow { Task { await peers.value.answerer?.receive(message) } }
        }
        let answerer = PeerConnection(configuration: PeerConfiguration(media: testMedia()), role: .answerer) { message in
            Task { await peers.value.offerer?.receive(message) }
        }
        peers.withLock { $0 = (offerer, answerer) }
        try await answerer.start()
        try await offerer.start()
        let recorded = recordingSide == .offerer ? offerer : answerer
        let url = recordingFile("late-\(recordingSide).mkv")
        let recording = try await recorded.startRecording(to: url, labels: RecordingLabels(local: "agent", remote: "caller"),
                                                          options: RecordingOptions(trackStartTimeout: .seconds(30)))
        let joinDelay = 3.0
        try await Task.sleep(for: .seconds(joinDelay))
        let late = held.withLock { queue in defer { queue = nil }; return queue ?? [] }
        for message in late { await answerer.receive(message) }
        try await waitFor(.connected, on: recorded)
        try await waitForAllTracks(recording)
        try await Task.sleep(for: .seconds(2)) // media time to record
        let summary = try await recording.stop()
        await offerer.close()
        await answerer.close()
        let info = try await RecordingInspector.inspect(url)
        func track(_ title: String) throws -> RecordedFileInfo.Track {
            try #require(info.tracks.first { $0.title == title }, "\(title) in \(info.tracks.map(\.title))")
        }
        let duration = summary.duration.seconds
        for title in ["agent video", "agent audio"] {
            let local = try track(title)
            #expect(abs((local.lastTime ?? 0) - duration) < 0.3, "\(title) ends at \(local.lastTime ?? -1) s of \(duration) s")
        }
        for title in ["caller video", "caller audio"] {
            let remote = try track(title)
            #expect((remote.firstTime ?? 0) >= joinDelay - 0.2, "\(title) starts at \(remote.firstTime ?? -1) s, answered after \(joinDelay) s")
        }
        // An ECVKit offerer that waited for its answer sends the frames webrtcbin held meanwhile in
        // a burst, which the receiver's jitter buffer spreads out over their RTP times: its media
        // runs behind at the answerer for a while (README, Known limits). Foreign senders do not
        // hold media back, and the offerer's own recording is checked at the end.
        guard recordingSide == .offerer else { return }
        for title in ["caller video", "caller audio"] {
            let remote = try track(title)
            #expect(abs((remote.lastTime ?? 0) - duration) < 0.3, "\(title) ends at \(remote.lastTime ?? -1) s of \(duration) s")
        }
        let ends = try ["agent video", "caller video"].map { try track($0).lastTime ?? 0 }
        #expect(abs(ends[0] - ends[1]) < 0.2, "local and remote video end \(ends) s")
    }

    @Test(arguments: ["VP8", "H264"])
    func recordsBothDirectionsWithoutReencoding(codec: String) async throws {
        let (pair, atOfferer, _) = try await connectedPair(offerer: testMedia(codec: codec), answerer: testMedia(codec: codec))
        let pipeline = try #require(await pair.answerer.mediaPipeline)
        let elementsBefore = pipeline.children.count
        let url = recordingFile("call-\(codec).mkv")
        let recording = try await pair.answerer.startRecording(to: url, labels: RecordingLabels(local: "agent", remote: "caller"))
        try await waitForAllTracks(recording)
        #expect(pipeline.children.count == elementsBefore, "the taps are probes: no element joins the call's pipeline")
        try await Task.sleep(for: .seconds(4)) // media time to record
        let summary = try await recording.stop()
        #expect(pipeline.children.count == elementsBefore, "the recorder's elements left the call's pipeline")

        // The call goes on after the recording stopped.
        let framesAfterStop = atOfferer.video.count
        try await eventually(.seconds(5), "video still flowing") { atOfferer.video.count > framesAfterStop + 10 }

        let discovery = try Discovery.run(url)
        let videos = discovery.streams("video"), audios = discovery.streams("audio")
        #expect(videos.count == 2 && audios.count == 2, "\(discovery.output)")
        let videoType = codec == "VP8" ? "video/x-vp8" : "video/x-h264"
        #expect(videos.allSatisfy { $0.mediaType == videoType }, "\(videos.map(\.caps))")
        #expect(audios.allSatisfy { $0.mediaType == "audio/x-opus" })
        let titles = Set(discovery.streams.flatMap(\.tags))
        #expect(titles.isSuperset(of: ["agent video", "agent audio", "caller video", "caller audio"]), "\(titles)")
        let recorded = summary.duration.seconds
        #expect(abs(discovery.duration - recorded) <= 0.1 * recorded, "file lasts \(discovery.duration) s, recorded \(recorded) s")

        let info = try await RecordingInspector.inspect(url)
        #expect(info.videoTracks.count == 2 && info.audioTracks.count == 2)
        for track in info.videoTracks {
            let span = (track.lastTime ?? 0) - (track.firstTime ?? 0)
            #expect(track.keyFrames >= 1 && Double(track.frames) >= 0.8 * span * 30, "\(track.pad): \(track.frames) frames over \(span) s")
        }
        for track in info.audioTracks {
            #expect(Double(track.frames) >= 0.8 * recorded * 50, "\(track.pad): \(track.frames) Opus frames in \(recorded) s")
        }

        // The stats sidecar: a line a second per direction, sampled from the peer connection.
        let statsText = try String(contentsOf: try #require(summary.statsURL), encoding: .utf8)
        let lines = try statsText.split(separator: "\n").map { try JSONDecoder().decode(StatsLine.self, from: Data($0.utf8)) }
        for direction in [DirectionStats.Direction.sent, .received] {
            let samples = lines.filter { $0.direction == direction }
            #expect(samples.count >= 3, "\(direction): \(samples.count) lines")
            let last = try #require(samples.last)
            #expect((last.bitrate ?? 0) > 50_000 && (last.fps ?? 0) > 10, "\(direction): \(last)")
            // Received: our own loss count. Sent: the round trip from RTCP (GStreamer 1.22 reports
            // the far end's loss as -1, which stays nil rather than a bogus number).
            #expect(direction == .received ? last.packetsLost != nil : last.roundTripTime != nil, "\(direction): \(last)")
        }
        // The far end's audio against its video, from its sender reports: an ECVKit sender is in
        // sync within a few ms (the lip-sync benchmark's figures); only the received side has it.
        let offsets = lines.filter { $0.direction == .received }.compactMap(\.avOffsetMs)
        print("received audio minus video against capture: \(offsets) ms")
        #expect(!offsets.isEmpty && offsets.allSatisfy { abs($0) < 20 }, "audio minus video \(offsets) ms")
        #expect(lines.filter { $0.direction == .sent }.allSatisfy { $0.avOffsetMs == nil })
        await pair.close()
    }
}

@Suite(.serialized) struct RecordingPlayoutTests {
    /// Far-end audio that is played (a clock-synced sink) must not hold the stream's other
    /// branches: the recorder's tap got every packet only after playback took it, so the last
    /// ~0.2 s of the far end never reached the file.
    @Test func playedRemoteAudioReachesTheFileUntilTheEnd() async throws {
        var played = testMedia()
        played.receiveAudio = .playback
        let pair = PeerPair(offerer: played, answerer: testMedia())
        try await pair.start()
        try await waitFor(.connected, on: pair.offerer)
        let url = recordingFile("playout.mkv")
        let recording = try await pair.offerer.startRecording(to: url, labels: RecordingLabels(local: "caller", remote: "agent"))
        try await waitForAllTracks(recording)
        try await Task.sleep(for: .seconds(3))  // media time to record
        try await recording.stop()
        let info = try await RecordingInspector.inspect(url)
        let ends = info.audioTracks.compactMap(\.lastTime)
        #expect(ends.count == 2, "\(info.audioTracks.map(\.pad))")
        if ends.count == 2 { #expect(abs(ends[0] - ends[1]) <= 0.08, "audio tracks end at \(ends) s") }
        await pair.close()
    }
}

@Suite(.serialized) struct RecordingRebuildTests {
    @Test func aRebuildContinuesTheSameTracksInTheSameFile() async throws {
        let (pair, _, _) = try await connectedPair(offerer: testMedia(), answerer: testMedia())
        let url = recordingFile("rebuild.mkv")
        let recording = try await pair.offerer.startRecording(to: url, labels: RecordingLabels(local: "caller", remote: "agent"))
        let events = recording.recorder.events()
        let seen = Locked<[RecordingEvent]>([])
        let watcher = Task { for await event in events { seen.withLock { $0.append(event) } } }
        try await waitForAllTracks(recording)
        try await Task.sleep(for: .seconds(2)) // media time to record
        let rebuiltAt = recording.recorder.mediaTime.seconds
        try await pair.offerer.rebuild()
        try await waitFor(.connected, on: pair.offerer)
        try await eventually(.seconds(15), "remote tracks re-attached") {
            let events = seen.value
            return events.contains(.reattached(.remoteVideo)) && events.contains(.reattached(.remoteAudio))
        }
        try await Task.sleep(for: .seconds(3)) // media time to record
        let summary = try await recording.stop()
        watcher.cancel()
        #expect(recording.problems.isEmpty, "\(recording.problems)")

        let discovery = try Discovery.run(url)
        #expect(discovery.streams("video").count == 2 && discovery.streams("audio").count == 2, "\(discovery.output)")
        let recorded = summary.duration.seconds
        #expect(abs(discovery.duration - recorded) <= 0.1 * recorded, "file \(discovery.duration) s, recorded \(recorded) s")
        let info = try await RecordingInspector.inspect(url)
        #expect(info.videoTracks.count == 2 && info.audioTracks.count == 2)
        for track in info.tracks where !track.isText {
            let first = try #require(track.firstTime), last = try #require(track.lastTime)
            #expect(first < rebuiltAt && last > rebuiltAt + 2, "\(track.pad) spans \(first)…\(last) s around the rebuild at \(rebuiltAt) s")
        }
        await pair.close()
    }
}

@Suite(.serialized) struct RecordingLifecycleTests {
    @Test func anAudioOnlyCallRecordsTwoAudioTracks() async throws {
        let media = testMedia(videoEnabled: false)
        let pair = PeerPair(offerer: media, answerer: media)
        try await pair.start()
        try await waitFor(.connected, on: pair.offerer)
        let url = recordingFile("audio-only.mkv")
        let recording = try await pair.offerer.startRecording(to: url, labels: RecordingLabels(local: "caller", remote: "agent"))
        #expect(Set(recording.recorder.tracks.map(\.role)) == [.localAudio, .remoteAudio])
        try await waitForAllTracks(recording)
        try await Task.sleep(for: .seconds(2)) // media time to record
        try await recording.stop()
        let discovery = try Discovery.run(url)
        #expect(discovery.streams("video").isEmpty && discovery.streams("audio").count == 2, "\(discovery.output)")
        await pair.close()
    }

    @Test func aRecordingOutlivesTheCallAndStillFinalises() async throws {
        let (pair, _, _) = try await connectedPair(offerer: testMedia(), answerer: testMedia())
        let url = recordingFile("hung-up.mkv")
        let recording = try await pair.answerer.startRecording(to: url)
        try await waitForAllTracks(recording)
        try await Task.sleep(for: .seconds(2)) // media time to record
        await pair.close()
        let summary = try await recording.stop()
        #expect(summary.tracks.count == 4)
        let discovery = try Discovery.run(url)
        #expect(discovery.streams("video").count == 2 && discovery.streams("audio").count == 2, "\(discovery.output)")
        #expect(discovery.duration > 1.5, "finalised with a duration: \(discovery.duration) s")
        let notRunning = try await #require(throws: RecordingError.self) { _ = try await pair.answerer.startRecording(to: recordingFile("closed.mkv")) }
        #expect(notRunning.description.contains("not running"))
    }
}
