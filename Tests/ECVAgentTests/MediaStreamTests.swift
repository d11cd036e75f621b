import ECV
import ECVAgent
import ECVTestSupport
import Foundation
import GLibCore
import GStreamer
import MediaRuntime
import Testing

/// `WebRtcConnection.localStream` / `remoteStream` (the demo's CallScreen) and the
/// picture-in-picture recording, against a bot whose picture has another shape than the caller's.
@Suite(.serialized) struct MediaStreamTests {
    /// The caller sends red in portrait (240×320), the agent blue in landscape (320×240).
    struct Call {
        let backend: Backend
        let agent: AgentBot
        let log: EventLog
        let caller: ConnectedCall

        static func start() async throws -> Call {
            let backend = try await Backend.start()
            let agent = try await backend.agent { $0.video = .single(.testPattern(pattern: "blue")) }
            let sdk = try backend.sdk()
            let log = EventLog(sdk)
            let caller = try await connectedCall(sdk, log, agent: agent, video: .single(.testPattern(pattern: "red")),
                                                 parameters: ConnectParameters(videoWidth: 240, videoHeight: 320, noAudioProcessing: true))
            return Call(backend: backend, agent: agent, log: log, caller: caller)
        }

        func close() async {
            caller.call.hangup()
            _ = try? await log.wait(for: .CallEnded, caller.call.rtcId)
            await agent.logout()
            await backend.close()
        }
    }

    @Test func streamsDescribeTheirTracksAndAreTheStreamEventsObjects() async throws {
        let call = try await Call.start()
        let connection = call.caller.connection
        let remote = connection.remoteStream, local = connection.localStream
        let renderer = CountingRenderer()
        remote.videoRenderer = renderer
        try await eventually(.seconds(10), "the agent's pictures through remoteStream") { renderer.count > 10 }
        #expect(connection.remoteVideoRenderer === renderer, "one renderer, two names")

        let remoteVideo = try #require(remote.videoTrack)
        #expect(remoteVideo.codec == "VP8" && remoteVideo.payloadType != nil)
        #expect(remoteVideo.width == 320 && remoteVideo.height == 240, "the agent's size as it arrives: \(remoteVideo)")
        #expect((remoteVideo.framesPerSecond ?? 0) > 10, "\(remoteVideo)")
        #expect(remote.audioTrack?.codec == "OPUS")
        try await eventually(.seconds(10), "the caller's preview") { (local.videoTrack?.frames ?? 0) > 5 }
        let localVideo = try #require(local.videoTrack)
        #expect(localVideo.width == 240 && localVideo.height == 320, "what we send: \(localVideo)")
        #expect(local.tracks.map(\.kind) == [.video, .audio] && local.tracks.allSatisfy(\.isEnabled))

        let localEvent = try #require(call.log.first(.GotLocalStream, call.caller.call.rtcId)?.objData as? MediaStream)
        #expect(localEvent.party == .local)
        let remoteEvents = call.log.events(call.caller.call.rtcId).filter { $0.type == .GotRemoteStream }
        #expect(Set(remoteEvents.map(\.detail)) == ["video", "audio"])
        #expect(remoteEvents.allSatisfy { ($0.objData as? MediaStream)?.party == .remote })

        // The local switch is the call control: its event, and the agent is told.
        await local.setAudioEnabled(false)
        _ = try await call.log.wait(for: .AudioMuted, call.caller.call.rtcId)
        #expect(!local.isAudioEnabled && local.audioTrack?.isEnabled == false)
        try await eventually(.seconds(5), "the agent hears of it") {
            call.caller.agentCall.eventHistory.contains(.callerStatus(media: .audio, muted: true))
        }
        await call.close()
    }

    /// Switching the remote stream's video off stops the renderer while pictures keep arriving.
    @Test func remoteVideoOffStopsTheRendererNotTheStream() async throws {
        let call = try await Call.start()
        let remote = call.caller.connection.remoteStream
        let renderer = CountingRenderer()
        remote.videoRenderer = renderer
        try await eventually(.seconds(10), "the agent's pictures") { renderer.count > 5 }
        await remote.setVideoEnabled(false)
        #expect(!remote.isVideoEnabled)
        let rendered = renderer.count, seen = try #require(remote.videoTrack).frames
        try await eventually(.seconds(10), "15 more pictures decoded") { (remote.videoTrack?.frames ?? 0) >= seen + 15 }
        #expect(renderer.count <= rendered + 1, "at most the picture in flight reached the renderer")
        await remote.setVideoEnabled(true)
        try await eventually(.seconds(10), "pictures reach the renderer again") { renderer.count > rendered + 5 }
        await call.close()
    }

    /// Switching the remote stream's audio off silences what reaches the speaker; on plays again.
    @Test func remoteAudioOffSilencesThePlayback() async throws {
        let call = try await Call.start()
        // A failed expectation still ends the call, so no later suite sees it running.
        do { try await remoteAudioOffSilencesThePlayback(call) } catch {
            await call.close()
            throw error
        }
        await call.close()
    }

    private func remoteAudioOffSilencesThePlayback(_ call: Call) async throws {
        let connection = call.caller.connection
        let pipeline = try #require(await connection.peerConnection?.mediaPipeline)
        // The far end's audio branch is attached when its first packet arrives, which can be
        // after both ends saw video.
        @Sendable func playbackSink() -> Element? {
            pipeline.children.first { $0.name.hasPrefix("rx") && $0.name.contains("_audio_") && $0.name.hasSuffix("_sink") }
        }
        try await eventually(.seconds(10), "the playback sink: \(pipeline.children.map(\.name))") { playbackSink() != nil }
        let speaker = try #require(playbackSink())
        let heard = Locked<(silent: Int, sound: Int)>((0, 0))
        let probe = try #require(speaker.staticPad("sink")).addBufferProbe(readingData: true) { _, bytes in
            let silent = bytes.map { $0.allSatisfy { $0 == 0 } } ?? true
            heard.withLock { silent ? ($0.silent += 1) : ($0.sound += 1) }
            return .pass
        }
        defer { probe.cancel() }
        try await eventually(.seconds(10), "the agent's tone at the speaker") { heard.value.sound > 20 }

        await connection.remoteStream.setAudioEnabled(false)
        #expect(!connection.remoteStream.isAudioEnabled)
        heard.withLock { $0 = (0, 0) }
        try await eventually(.seconds(5), "50 buffers heard since") { heard.value.silent + heard.value.sound >= 50 }
        // The buffers already past the switch when it flipped may still sound; none after.
        heard.withLock { $0 = (0, 0) }
        try await eventually(.seconds(5), "50 more buffers") { heard.value.silent >= 50 }
        #expect(heard.value.sound == 0, "\(heard.value)")

        await connection.remoteStream.setAudioEnabled(true)
        try await eventually(.seconds(5), "the tone again") { heard.value.sound > 10 }
    }

    /// Both sides record one picture: the far end full-frame at the size it arrives in, the near
    /// end inset with its own shape.
    @Test func pictureInPictureFromTheCallerAndTheAgent() async throws {
        let call = try await Call.start()
        let callerFile = recordingURL("pip-caller.webm"), agentFile = recordingURL("pip-agent.mkv")
        try await call.caller.connection.startRecording(to: callerFile, format: .webm, layout: .pictureInPicture)
        try await call.caller.agentCall.startRecording(to: agentFile, format: .matroska, layout: .pictureInPicture)
        let second = await #expect(throws: ECVError.self) {
            try await call.caller.connection.startRecording(to: recordingURL("second.mkv"))
        }
        #expect(second?.name == .RECORDING_FAILED && call.caller.call.lastError.name == .RECORDING_FAILED, "one recording at a time: \(String(describing: second))")
        // What is recorded is the point: three seconds of the call.
        try await Task.sleep(for: .seconds(3))
        let callerSummary = try #require(try await call.caller.connection.stopRecording())
        let agentSummary = try #require(try await call.caller.agentCall.stopRecording())
        #expect(callerSummary.duration > .seconds(2) && agentSummary.duration > .seconds(2))

        // The caller's file: the agent (blue, 320×240) fills it; the caller (red, portrait) is the inset.
        let callerFrame = try await decodeFrame(of: callerFile, with: "matroskademux ! vp8dec", at: 2)
        #expect(callerFrame.width == 320 && callerFrame.height == 240, "the canvas is the agent's picture size")
        try expectPicture(callerFrame, main: .blue, inset: .red, insetAspect: 240.0 / 320.0)
        // The agent's file: the caller (red, 240×320) fills it; the agent (blue, landscape) is the inset.
        let agentFrame = try await decodeFrame(of: agentFile, with: "matroskademux ! vp8dec", at: 2)
        #expect(agentFrame.width == 240 && agentFrame.height == 320, "the canvas is the caller's picture size")
        try expectPicture(agentFrame, main: .red, inset: .blue, insetAspect: 320.0 / 240.0)
        await call.close()
    }

    enum Hue { case red, blue }

    func expectPicture(_ frame: VideoFrame, main: Hue, inset: Hue, insetAspect: Double) throws {
        let layout = CompositeLayout(width: frame.width, height: frame.height, insetAspectRatio: insetAspect)
        let box = layout.insetFrame
        #expect(abs(Double(box.width) / Double(box.height) - insetAspect) < 0.1, "the inset keeps the near end's shape: \(box)")
        let background = meanColor(frame, x: 16, y: 16, width: frame.width / 3, height: frame.height / 3)
        let corner = meanColor(frame, x: box.x + 6, y: box.y + 6, width: box.width - 12, height: box.height - 12)
        func isHue(_ color: (red: Double, green: Double, blue: Double), _ hue: Hue) -> Bool {
            hue == .red ? color.red > 170 && color.blue < 90 : color.blue > 170 && color.red < 90
        }
        #expect(isHue(background, main), "the far end fills the frame: \(background)")
        #expect(isHue(corner, inset), "the near end is the inset: \(corner)")
    }

    func recordingURL(_ name: String) -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ecv-media-stream-\(getpid())")
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let url = directory.appendingPathComponent(name)
        try? FileManager.default.removeItem(at: url)
        return url
    }
}
