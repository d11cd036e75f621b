import ECV
import ECVAgent
import ECVTestSupport
import ECVRecording
import Foundation
import GLibCore
import MediaRuntime
import Testing

/// An ECVKit caller and an ECVKit agent bot for every pair of preferred video codecs, with each
/// side making the offer: the call carries the offerer's codec both ways (every end can handle
/// every codec), and the caller's recording, started right after it joined (before the
/// negotiation settled), holds both parties' video and audio in the codec that really flowed.
@Suite(.serialized) struct CodecMatrixTests {
    static let codecs = ["VP8", "VP9", "H264"]
    static let cells: [(caller: String, agent: String, agentOffers: Bool)] =
        codecs.flatMap { caller in codecs.flatMap { agent in [true, false].map { (caller, agent, $0) } } }

    @Test(arguments: cells)
    func mediaBothWaysInTheOfferersCodec(caller: String, agent: String, agentOffers: Bool) async throws {
        let backend = try await Backend.start()
        let sdk = try backend.sdk()
        let log = EventLog(sdk)
        let bot = try await backend.agent { configuration in
            configuration.parameters.videoCodec = agent
            // The first in the room offers: a bot that waits lets the caller in first.
            configuration.roomJoinDelay = agentOffers ? .zero : .milliseconds(800)
        }
        let renderer = CountingRenderer()
        let call = try await placeCall(sdk, log: log, connect: ConnectParameters(videoWidth: 320, videoHeight: 240, videoCodec: caller,
                                                                                  noAudioProcessing: true), renderer: renderer)
        let connection = try #require(call.webRtcConnection)
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("codec-matrix-\(caller)-\(agent)-\(agentOffers).mkv")
        try? FileManager.default.removeItem(at: url)
        try await connection.startRecording(to: url)
        let connected = try await log.wait(for: .WebRtcConnected, call.rtcId)
        let agentCall = try #require(bot.call(rtcId: call.rtcId))
        let view = CallerView(agentCall)
        do { try await eventually(.seconds(10), "video both ways") { renderer.count > 20 && view.count > 20 } } catch {
            throw TestFailure("video both ways: the caller saw \(renderer.count) frames, the agent \(view.count); caller events \(log.types(call.rtcId).map(\.rawValue)); agent events \(agentCall.eventHistory)")
        }
        let expected = agentOffers ? agent : caller
        for key in ["videoCodec", "videoCodecSent", "videoCodecReceived"] {
            #expect(connected.data[key]?.hasPrefix(expected + "/") == true, "\(key): \(connected.data)")
        }
        #expect(await agentCall.negotiatedCodecs()["video"]?.hasPrefix(expected + "/") == true)
        #expect(agentCall.eventHistory.contains(.joinedRoom(initiator: agentOffers)))
        #expect(log.first(.GotRemoteStream, call.rtcId) != nil)
        let summary = try #require(try await connection.stopRecording())
        let info = try await RecordingInspector.inspect(summary.url)
        #expect(info.videoTracks.count == 2 && info.audioTracks.count == 2, "\(info.tracks.map(\.caps))")
        for track in info.tracks where track.isVideo || track.isAudio {
            #expect(track.frames > (track.isVideo ? 2 : 5), "\(track.title ?? track.pad): \(track.frames) frames")
            if track.isVideo { #expect(track.caps.hasPrefix("video/x-" + expected.lowercased()), "\(track.caps)") }
        }
        call.hangup()
        _ = try await log.wait(for: .CallEnded, call.rtcId)
        await bot.logout()
        await backend.close()
        try? FileManager.default.removeItem(at: url)
    }
}
