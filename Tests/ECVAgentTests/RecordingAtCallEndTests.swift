import ECV
@testable import ECVAgent
import ECVTestSupport
import Foundation
import MediaTestSupport
import Testing

/// A bot that logs out as soon as the service says its recorded call ended, as `ecv agent --calls 1`
/// does before it exits, finds the recording finished. The service's end closes the call's media in
/// a task of its own; `logout()` used to close only the calls still running, so it returned (and
/// the process exited) while that task was still finalising the file: 5 of 11 bot recordings of
/// Chromium calls kept GStreamer's quoting in their track titles (the muxer had written its tags,
/// the repair had not run), and a slower end left the file without its index.
@Suite(.serialized) struct RecordingAtCallEndTests {
    @Test func logoutRightAfterTheEndWaitsForTheRecording() async throws {
        let backend = try await Backend.start()
        let agent = try await backend.agent()
        let sdk = try backend.sdk()
        let log = EventLog(sdk)
        let call = try await connectedCall(sdk, log, agent: agent, parameters: ConnectParameters(videoWidth: 320, videoHeight: 240, noAudioProcessing: true))
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("ecv-call-end-\(getpid())-\(UUID().uuidString.prefix(6)).mkv")
        defer { try? FileManager.default.removeItem(at: file) } // a test's own temporary file
        try await call.agentCall.startRecording(to: file)
        let recording = try #require(call.agentCall.activeRecording)
        try await eventually(.seconds(15), "every track recording") { recording.recorder.startedTracks.count == recording.recorder.tracks.count }
        let events = agent.events()
        call.call.hangup()
        for await event in events {
            if case .callEnded = event { break }
        }
        await agent.logout()

        // Finished by now: the muxer's tags hold the titles as written (the repair pads them with
        // NUL bytes to the quoted length), none of them quoted.
        let bytes = try Data(contentsOf: file)
        for title in ["agent video", "agent audio", "caller video", "caller audio"] {
            #expect(bytes.range(of: Data((title + "\0").utf8)) != nil, "no finished tag for \(title)")
            #expect(bytes.range(of: Data(("\"" + title.replacingOccurrences(of: " ", with: "\\ ") + "\"").utf8)) == nil, "\(title) left quoted")
        }
        await backend.close()
    }
}
