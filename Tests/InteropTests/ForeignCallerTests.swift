import ECV
import ECVAgent
import ECVProtocol
import ECVTestSupport
import Foundation
import GLibCore
import GStreamer
import MediaPipeline
import MediaRuntime
import Testing

extension InteropTests {
    /// The foreign peer is the caller's media end (the service's browser page, or aiortc); ECVKit's
    /// agent bot answers, records, and sends HOLD, PICKUP, FLASH_ON and TAKE_PHOTO_ON; the foreign
    /// caller mutes and unmutes its audio (STATUS).
    @Suite("Interop: a foreign caller meets ECVKit's agent bot", .serialized)
    struct ForeignCallerTests {
        @Test(.enabled(if: InteropEnvironment.hasChromium, Comment(rawValue: InteropEnvironment.missingChromium)),
              arguments: InteropCell.all(.chromium, role: .caller) + InteropCell.mixedPreferences(.chromium, role: .caller)
                  + [InteropCell(peer: .chromium, role: .caller, foreignOffers: true, codec: "VP8", label: "text")])
        func chromium(_ cell: InteropCell) async throws { try await Self.play(cell) }

        @Test(.enabled(if: InteropEnvironment.hasVenv, Comment(rawValue: InteropEnvironment.missingVenv)),
              arguments: InteropCell.all(.aiortc, role: .caller) + InteropCell.mixedPreferences(.aiortc, role: .caller))
        func aiortc(_ cell: InteropCell) async throws { try await Self.play(cell) }

        static func play(_ cell: InteropCell) async throws {
            let backend = try await Backend.start()
            let agent = try await backend.agent(configure: { configuration in
                configuration.autoAccept = !cell.foreignOffers
                configuration.parameters = ConnectParameters(videoWidth: 640, videoHeight: 480, videoCodec: cell.ecvkitPreference, noAudioProcessing: true)
                configuration.flashReplyTimeout = .seconds(3)
            })
            let botEvents = agent.events()
            let sdk = try backend.sdk()
            let log = EventLog(sdk)
            let call = try #require(await sdk.createVideoCall())
            await call.start(dialCallParameters: DialCallParameters(callerName: "Jane"))
            let room = call.rtcId
            let mutes = [(1.2, "audio:muted"), (2.0, "audio:unmuted")]
            var report = CellReport(cell: cell)
            var foreign: ForeignPeer?
            do {
                if cell.foreignOffers {
                    // The foreign caller joins the room first (it offers); the bot accepts afterwards.
                    let offer = try await within(15, "the bot being offered \(room)") {
                        for await event in botEvents { if case .offered(let offer) = event, offer.rtcId == room { return offer } }
                        throw TestFailure("the bot's events ended")
                    }
                    foreign = try cell.peerProcess(base: backend.url, room: room, token: call.callerToken, sends: [], mutes: mutes)
                    try await foreign!.waitForProgress("joined initiator=true")
                    _ = try await agent.accept(offer)
                } else {
                    try await eventually(.seconds(15), "the bot joined room \(room) first") {
                        agent.call(rtcId: room)?.eventHistory.contains(.joinedRoom(initiator: true)) == true
                    }
                    foreign = try cell.peerProcess(base: backend.url, room: room, token: call.callerToken, sends: [], mutes: mutes)
                }
                guard let foreign else { return }
                let agentCall = try #require(agent.call(rtcId: room))
                let rendered = Locked(0)
                agentCall.onCallerFrame { _ in rendered.withLock { $0 += 1 } }
                try await eventually(.seconds(30), "ECVKit's agent call connected") { agentCall.isConnected }
                // The recorder joins a running call (half a second of the far end's video went by): the
                // far end's video starts at once in the file only because ECVKit asks for a key frame.
                try await eventually(.seconds(20), "the bot rendered the foreign caller's video") { rendered.value >= 15 }
                report.recordingStartedAt = Date().timeIntervalSince1970
                _ = try await agentCall.startRecording(to: cell.recordingFile)
                try await foreign.waitForProgress("channel-open", timeout: .seconds(30))

                // The agent's script, spaced out over the foreign peer's media time (these pauses pace
                // commands in a live call; nothing waits on them for a condition).
                var problems: [String] = []
                try await Task.sleep(for: .seconds(1))
                do { try agentCall.hold() } catch { problems.append("HOLD not sent: \(error)") }
                try await Task.sleep(for: .milliseconds(600))
                do { try agentCall.pickup() } catch { problems.append("PICKUP not sent: \(error)") }
                var flashReply = "not asked"
                do { flashReply = try await agentCall.requestFlash(true).rawValue } catch { problems.append("FLASH_ON not sent: \(error)") }
                do { try agentCall.takePhoto(true) } catch { problems.append("TAKE_PHOTO_ON not sent: \(error)") }

                let summary = try await foreign.summary(peer: cell.peer, timeout: .seconds(cell.durationSeconds + 40))
                report.foreign = summary
                let recorded = try await agentCall.stopRecording()
                report.ecvkitRendered = rendered.value
                await agentCall.hangup()
                await foreign.finish()

                problems += report.mediaProblems(foreignSide: "caller", ecvkitSide: "agent")

                // Commands both ways.
                let expectedTexts = ["HOLD|\(room)", "PICKUP|\(room)", "FLASH_ON", "TAKE_PHOTO_ON"]
                let reached = expectedTexts.filter(summary.received.contains)
                let history = agentCall.eventHistory
                let statuses = [AgentCallEvent.callerStatus(media: .audio, muted: true), .callerStatus(media: .audio, muted: false)]
                let statusesReached = statuses.filter(history.contains)
                report.commandsExpected = expectedTexts.count + statuses.count + 1
                report.commandsReached = reached.count + statusesReached.count + (flashReply == "UNAVAILABLE" ? 1 : 0)
                if reached.count < expectedTexts.count {
                    problems.append("the foreign caller received \(summary.received), missing \(expectedTexts.filter { !reached.contains($0) })")
                }
                if flashReply != "UNAVAILABLE" { problems.append("the flash request was answered \(flashReply), not UNAVAILABLE") }
                if statusesReached.count < statuses.count {
                    problems.append("the bot saw \(history) after the caller sent \(summary.sent)")
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
