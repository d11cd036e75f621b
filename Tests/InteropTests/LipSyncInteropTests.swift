import ECV
import ECVAgent
import ECVRecording
import ECVTestSupport
import Foundation
import GLibCore
import MediaTestSupport
import Testing

extension InteropTests {
    /// An aiortc caller sends the lip-sync signal (a white flash and a beep captured together once a
    /// second); ECVKit's agent bot records the call. aiortc pairs each sender report's RTP time with
    /// when its last packet was *sent*, so its reports wobble from one to the next; the recording
    /// must not step with them (ECVKit smooths the reports before rtpbin lines the streams up by
    /// them, `SenderReportSmoothing`): after the first reports, the flashes' audio-minus-video
    /// offsets stay within LiveKit egress's "stable" 10 ms of their median, whatever that median is
    /// (aiortc's own capture-to-send delays stay in it; the median is judged against ITU-R
    /// BT.1359's window only).
    @Suite("Interop: an aiortc caller recorded in lip sync", .serialized)
    struct LipSyncInteropTests {
        static let recordSeconds = 10
        static let settledAfter = 2.5

        @Test(.enabled(if: InteropEnvironment.hasVenv, Comment(rawValue: InteropEnvironment.missingVenv)))
        func aiortcFlashesAndBeepsStayTogether() async throws {
            let backend = try await Backend.start()
            let agent = try await backend.agent(configure: { configuration in
                configuration.autoAccept = true
                configuration.parameters = ConnectParameters(videoWidth: 640, videoHeight: 480, videoCodec: "VP8", noAudioProcessing: true)
            })
            let sdk = try backend.sdk()
            let call = try #require(await sdk.createVideoCall())
            await call.start(dialCallParameters: DialCallParameters(callerName: "Jane"))
            let room = call.rtcId
            let url = FileManager.default.temporaryDirectory.appendingPathComponent("ecv-interop-lip-sync-aiortc.mkv")
            try? FileManager.default.removeItem(at: url)
            var foreign: ForeignPeer?
            defer { try? FileManager.default.removeItem(at: url) }
            do {
                try await eventually(.seconds(15), "the bot joined room \(room) first") {
                    agent.call(rtcId: room)?.eventHistory.contains(.joinedRoom(initiator: true)) == true
                }
                let peer = try ForeignPeer(script: "aiortc_peer.py",
                                           arguments: ["--url", backend.url, "--room", room, "--role", "caller", "--codec", "VP8", "--flash-beep",
                                                       "--duration", String(Self.recordSeconds + 6)] + (call.callerToken.map { ["--token", $0] } ?? []),
                                           name: "aiortc lip sync")
                foreign = peer
                let agentCall = try #require(agent.call(rtcId: room))
                try await eventually(.seconds(30), "ECVKit's agent call connected") { agentCall.isConnected }
                try await peer.waitForProgress("connected", timeout: .seconds(30))
                _ = try await agentCall.startRecording(to: url)
                try await Task.sleep(for: .seconds(Self.recordSeconds)) // media time to record
                _ = try await agentCall.stopRecording()
                await agentCall.hangup()
            } catch {
                await foreign?.finish()
                call.hangup()
                await agent.logout()
                await backend.close()
                throw error
            }
            await foreign?.finish()
            call.hangup()
            await agent.logout()
            await backend.close()

            let report = try await RecordingInspection.inspect(url).report
            let callerVideo = try #require(report.tracks.first { $0.name == "caller video" }?.firstTime)
            let info = try await RecordingInspector.inspect(url)
            let videoPads = info.videoTracks.filter { $0.title == "caller video" }.map(\.pad)
            let audioPads = info.audioTracks.filter { $0.title == "caller audio" }.map(\.pad)
            let measured = try await FlashBeep.measure(url, videoPads: videoPads, audioPads: audioPads, settledAfter: callerVideo + Self.settledAfter)
            let offsets = measured.offsetsMs
            print("aiortc lip sync: \(measured.flashes.count) flashes, \(measured.beeps.count) beeps from \(callerVideo) s; audio minus video "
                  + "\(offsets.map { String(format: "%.1f", $0) }) ms; sidecar a/v "
                  + "\(report.stats?.directions.first { $0.direction == "received" }?.audioVideoOffsetMs.map { "\($0.min)/\($0.median)/\($0.max)" } ?? "none")")
            #expect(offsets.count >= 4, "flashes \(measured.flashes), beeps \(measured.beeps), caller video from \(callerVideo) s, tracks \(report.tracks)")
            guard !offsets.isEmpty else { return }
            let median = offsets.sorted()[offsets.count / 2]
            #expect(RecordingReport.Verdict.inSync.contains(median), "audio \(median) ms after its flash at the median")
            // A loaded machine can drop a frame or a packet and move one flash or beep: most, not all.
            let stable = offsets.filter { abs($0 - median) <= 10 }
            #expect(stable.count * 3 >= offsets.count * 2, "\(stable.count) of \(offsets) within 10 ms of the median \(median)")
        }
    }
}
