import ECV
@testable import ECVAgent
import ECVProtocol
import ECVTestSupport
import Foundation
import GStreamer
import MediaPipeline
import MediaRuntime
import Testing

extension InteropTests {
    /// The foreign peer is the agent's media end: an agent logs in over the agent socket and accepts
    /// (a bot that does not join rooms), an ECVKit caller dials and records, and the foreign peer joins
    /// the room, sends HOLD, PICKUP, FLASH_ON, TAKE_PHOTO_ON and mutes its video (STATUS); the ECVKit
    /// caller mutes and unmutes its audio.
    @Suite("Interop: an ECVKit caller meets a foreign agent-side peer", .serialized)
    struct ForeignAgentTests {
        @Test(.enabled(if: InteropEnvironment.hasChromium, Comment(rawValue: InteropEnvironment.missingChromium)),
              arguments: InteropCell.all(.chromium, role: .agent) + InteropCell.mixedPreferences(.chromium, role: .agent))
        func chromium(_ cell: InteropCell) async throws { try await Self.play(cell) }

        /// ECVKit protects its video with RED/ULPFEC: the answer (Chromium's or ours) carries
        /// `red` and `ulpfec` under the offer's payload types, and media flows both ways.
        @Test(.enabled(if: InteropEnvironment.hasChromium, Comment(rawValue: InteropEnvironment.missingChromium)),
              arguments: InteropCell.forwardErrorCorrection(role: .agent))
        func chromiumWithFEC(_ cell: InteropCell) async throws { try await Self.play(cell) }

        @Test(.enabled(if: InteropEnvironment.hasVenv, Comment(rawValue: InteropEnvironment.missingVenv)),
              arguments: InteropCell.all(.aiortc, role: .agent) + InteropCell.mixedPreferences(.aiortc, role: .agent)
                  + [InteropCell(peer: .aiortc, role: .agent, foreignOffers: true, codec: "VP8", label: "text")])
        func aiortc(_ cell: InteropCell) async throws { try await Self.play(cell) }

        static func play(_ cell: InteropCell) async throws {
            let backend = try await Backend.start()
            let agent = try await backend.agent(configure: { $0.joinsRooms = false })
            let sdk = try backend.sdk()
            let log = EventLog(sdk)
            let call = try #require(await sdk.createVideoCall())
            await call.start(dialCallParameters: DialCallParameters(callerName: "Jane"))
            let room = call.rtcId
            var report = CellReport(cell: cell)
            var foreign: ForeignPeer?
            do {
                _ = try await log.wait(for: .AgentConnected, room)
                var parameters = ConnectParameters(videoWidth: 640, videoHeight: 480, videoCodec: cell.ecvkitPreference, noAudioProcessing: true)
                if cell.fec { parameters.lossRecovery.forwardErrorCorrection = true }
                let connection = try #require(call.connect(parameters: parameters))
                let renderer = CountingRenderer()
                connection.remoteVideoRenderer = renderer
                let sends = [(1.0, "HOLD|\(room)"), (1.6, "PICKUP|\(room)"), (2.2, "FLASH_ON"), (2.8, "TAKE_PHOTO_ON")]
                let mutes = [(3.4, "video:muted"), (3.9, "video:unmuted")]
                if cell.foreignOffers {
                    foreign = try cell.peerProcess(base: backend.url, room: room, token: agent.sessionToken, sends: sends, mutes: mutes)
                    try await foreign!.waitForProgress("joined initiator=true")
                    await connection.startRoom()
                } else {
                    await connection.startRoom()
                    _ = try await log.wait(for: .JoinedRoom, room)
                    foreign = try cell.peerProcess(base: backend.url, room: room, token: agent.sessionToken, sends: sends, mutes: mutes)
                }
                guard let foreign else { return }
                _ = try await log.wait(for: .WebRtcConnected, room, timeout: .seconds(30))
                // The recorder joins a running call (half a second of the far end's video went by): the
                // far end's video starts at once in the file only because ECVKit asks for a key frame.
                try await eventually(.seconds(20), "ECVKit's caller rendered the foreign agent's video") { renderer.count >= 15 }
                report.recordingStartedAt = Date().timeIntervalSince1970
                try await connection.startRecording(to: cell.recordingFile)
                try await foreign.waitForProgress("channel-open", timeout: .seconds(30))

                // The caller mutes and unmutes while the foreign agent runs its script (a pause that
                // paces the live call, not a wait for a condition).
                try await Task.sleep(for: .seconds(3))
                connection.setAudioEnabled(state: false)
                try await Task.sleep(for: .milliseconds(400))
                connection.setAudioEnabled(state: true)

                let summary = try await foreign.summary(peer: cell.peer, timeout: .seconds(cell.durationSeconds + 40))
                report.foreign = summary
                let recorded = try await connection.stopRecording()
                report.ecvkitRendered = renderer.count
                call.hangup()
                _ = try? await log.wait(for: .CallEnded, room)
                await foreign.finish()

                var problems = report.mediaProblems(foreignSide: "agent", ecvkitSide: "caller")

                // Commands both ways: the agent's, as events at the caller; the caller's answers and STATUS at the agent.
                let commandEvents: [VideoCallEventType] = [.StartHold, .EndHold, .FlashRequested, .TakePhotoOn, .RemoteVideoMuted, .RemoteVideoUnmuted]
                let eventsSeen = commandEvents.filter { log.count($0, room) > 0 }
                let expectedTexts = ["FLASH_ON|UNAVAILABLE", "STATUS|AUDIO|MUTED|\(room)", "STATUS|AUDIO|UNMUTED|\(room)"]
                let textsSeen = expectedTexts.filter(summary.received.contains)
                report.commandsExpected = commandEvents.count + expectedTexts.count
                report.commandsReached = eventsSeen.count + textsSeen.count
                if eventsSeen.count < commandEvents.count {
                    problems.append("the caller raised \(eventsSeen.map(\.rawValue)) of \(commandEvents.map(\.rawValue)) after the agent sent "
                                    + "\(summary.sent); its events: \(log.types(room).map(\.rawValue))")
                }
                if textsSeen.count < expectedTexts.count {
                    problems.append("the foreign agent received \(summary.received), missing \(expectedTexts.filter { !textsSeen.contains($0) })")
                }

                if cell.fec {
                    let local = summary.sdp["local"] ?? [], remote = summary.sdp["remote"] ?? []
                    print("interop \(cell.name): the foreign peer's video payload types, local \(InteropCell.videoPayloadTypes(local)), "
                          + "remote \(InteropCell.videoPayloadTypes(remote))")
                    problems += cell.fecProblems(localSDP: local, remoteSDP: remote)
                    // Opus's in-band FEC: our decoder uses it, so our SDP asks the far end's encoder for it.
                    let ours = cell.foreignOffers ? remote : local
                    if !ours.contains(where: { $0.hasPrefix("a=fmtp:") && $0.contains("useinbandfec=1") }) {
                        problems.append("ECVKit's SDP does not ask for Opus in-band FEC (useinbandfec=1): \(ours.filter { $0.hasPrefix("a=fmtp:") })")
                    }
                }
                problems += try await report.checkRecording(recorded)
                report.conclude(problems, progress: foreign.progress)
            } catch {
                await report.concludeInterrupted(by: error, foreign: foreign, callerEvents: log.types(room).map(\.rawValue))
            }
            await foreign?.finish()
            call.hangup()
            await agent.logout()
            await backend.close()
        }
    }
}
