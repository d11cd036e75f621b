import ECV
@testable import ECVAgent
import ECVProtocol
import ECVTestSupport
import ECVRecording
import Foundation
import MediaRuntime
import MediaTestSupport
import Testing

extension InteropTests {
    /// The `ecv` command itself against aiortc, with ECVKit offering (aiortc accepts only
    /// ECDHE-ECDSA suites, so these calls fail without our ECDSA certificate): `ecv agent` answers
    /// an aiortc caller, `ecv call` dials an aiortc agent-side peer. DTLS must connect and media
    /// flow both ways: aiortc decodes ECVKit's video and audio, and ECVKit's side receives aiortc's.
    @Suite("Interop: the ecv command against aiortc, ECVKit offering", .serialized)
    struct CommandLineInteropTests {
        static let media = ["--width", "640", "--height", "480", "--codec", "VP8", "--no-audio-processing"]

        @Test(.enabled(if: InteropEnvironment.hasVenv, Comment(rawValue: InteropEnvironment.missingVenv)))
        func ecvAgentAnswersAnAiortcCaller() async throws { try await Self.ecvAgentAnswers(.aiortc) }

        /// The issue's case: `ecv agent --calls 1 --record` exits once the service ends the call, and
        /// its recording of the Chromium caller must be finished by then, titles and all.
        @Test(.enabled(if: InteropEnvironment.hasChromium, Comment(rawValue: InteropEnvironment.missingChromium)))
        func ecvAgentAnswersAChromiumCaller() async throws { try await Self.ecvAgentAnswers(.chromium) }

        static func ecvAgentAnswers(_ peer: InteropCell.Peer) async throws {
            let backend = try await Backend.start()
            let sdk = try backend.sdk()
            let call = try #require(await sdk.createVideoCall())
            await call.start(dialCallParameters: DialCallParameters(callerName: "Jane"))
            let room = call.rtcId
            let recordings = FileManager.default.temporaryDirectory.appendingPathComponent("ecv-cli-interop-\(UUID().uuidString.prefix(8))")
            try FileManager.default.createDirectory(at: recordings, withIntermediateDirectories: true)
            let agent = try ForeignPeer(executable: BuiltExecutable.url(named: "ecv"),
                                        arguments: ["agent", "--service-url", backend.url, "--name", "Bot", "--calls", "1", "--json",
                                                    "--record", recordings.path] + Self.media, name: "ecv agent")
            let cell = InteropCell(peer: peer, role: .caller, foreignOffers: false, codec: "VP8")
            var caller: ForeignPeer?
            do {
                // `ecv agent` joins the room first, so it offers once the aiortc caller arrives.
                try await Self.waitForLine(of: agent, containing: "joined the room (this bot offers)")
                caller = try cell.peerProcess(base: backend.url, room: room, token: call.callerToken, sends: [], mutes: [])
                let summary = try await caller!.summary(peer: peer, timeout: .seconds(cell.durationSeconds + 40))
                await caller!.finish()
                call.hangup()
                try await Self.waitForExit(of: agent)
                let lines = agent.output
                #expect(agent.exitStatus == 0, "ecv agent exited \(agent.exitStatus ?? -1):\n\(agent.transcript)")
                #expect(lines.contains { $0.contains("\"what\":\"connected\"") }, "DTLS connected: \(lines)")
                if peer == .aiortc { Self.expectMediaReached(aiortc: summary, cell: cell) }
                // What the caller sent reached ECVKit: the agent's recording holds the caller's video and audio,
                // finished before the bot exited (its titles as written, none left quoted).
                let file = recordings.appendingPathComponent("\(room).mkv")
                let info = try await RecordingInspector.inspect(file)
                Self.expectRemoteMedia(in: info, seconds: summary.mediaSeconds)
                #expect(RecordingCheck.quotedTitles(RecordingCheck.partyTitles, in: try Data(contentsOf: file)).isEmpty,
                        "quoted titles in \(file.lastPathComponent)")
                #expect(Set(info.tracks.compactMap(\.title)).isSuperset(of: RecordingCheck.partyTitles), "titles \(info.tracks.map { $0.title ?? "-" })")
                print("interop ecv agent ↔ \(peer) caller (ECVKit offers, VP8): the caller decoded \(summary.framesDecoded) frames, "
                      + "audio in \(summary.audioReceived); ECVKit recorded \(info.tracks.map { "\($0.pad) \($0.title ?? "-") \($0.frames)" })")
            } catch {
                Issue.record(Comment(rawValue: "\(error)\nagent:\n\(agent.transcript)\ncaller:\n\(caller?.transcript ?? "-")"))
            }
            await caller?.finish()
            await agent.finish()
            call.hangup()
            try? FileManager.default.removeItem(at: recordings)
            await backend.close()
        }

        @Test(.enabled(if: InteropEnvironment.hasVenv, Comment(rawValue: InteropEnvironment.missingVenv)))
        func ecvCallDialsAnAiortcAgent() async throws {
            let backend = try await Backend.start()
            let agent = try await backend.agent(configure: { $0.joinsRooms = false })
            let recording = FileManager.default.temporaryDirectory.appendingPathComponent("ecv-cli-interop-\(UUID().uuidString.prefix(8)).mkv")
            let caller = try ForeignPeer(executable: BuiltExecutable.url(named: "ecv"),
                                         arguments: ["call", "--service-url", backend.url, "--name", "Jane", "--duration", "9", "--json",
                                                     "--stats", "--record", recording.path] + Self.media, name: "ecv call")
            let cell = InteropCell(peer: .aiortc, role: .agent, foreignOffers: false, codec: "VP8")
            var foreignAgent: ForeignPeer?
            do {
                // `ecv call` joins the room first and offers when the aiortc agent-side peer joins.
                let joined = try await Self.waitForLine(of: caller, containing: "\"event\":\"JoinedRoom\"")
                let room = try #require(Self.field("rtcId", in: joined))
                foreignAgent = try cell.peerProcess(base: backend.url, room: room, token: agent.sessionToken, sends: [], mutes: [])
                let summary = try await foreignAgent!.summary(peer: .aiortc, timeout: .seconds(cell.durationSeconds + 40))
                try await Self.waitForExit(of: caller)
                let lines = caller.output
                #expect(caller.exitStatus == 0, "ecv call exited \(caller.exitStatus ?? -1):\n\(caller.transcript)")
                #expect(lines.contains { $0.contains("\"event\":\"WebRtcConnected\"") }, "DTLS connected: \(lines)")
                let receiving = lines.filter { $0.contains("\"event\":\"Stats\"") && !$0.contains("\"receivedVideoBps\":0,") }
                #expect(!receiving.isEmpty, "ECVKit's stats show video arriving: \(lines)")
                Self.expectMediaReached(aiortc: summary, cell: cell)
                let info = try await RecordingInspector.inspect(recording)
                Self.expectRemoteMedia(in: info, seconds: summary.mediaSeconds)
                print("interop ecv call ↔ aiortc agent-side (ECVKit offers, VP8): aiortc decoded \(summary.framesDecoded) frames, "
                      + "audio in \(summary.audioReceived); ECVKit recorded \(info.tracks.map { "\($0.pad) \($0.frames)" })")
            } catch {
                Issue.record(Comment(rawValue: "\(error)\ncaller:\n\(caller.transcript)\nagent side:\n\(foreignAgent?.transcript ?? "-")"))
            }
            await foreignAgent?.finish()
            await caller.finish()
            try? FileManager.default.removeItem(at: recording)
            await agent.logout()
            await backend.close()
        }

        /// aiortc decoded ECVKit's video in the cell's codec and received its audio.
        static func expectMediaReached(aiortc summary: ForeignSummary, cell: InteropCell) {
            let seconds = summary.mediaSeconds
            #expect(summary.ok && summary.errors.isEmpty, "aiortc reported \(summary.errors)")
            #expect(Double(summary.framesDecoded) >= 0.7 * InteropCell.fps * seconds, "aiortc decoded \(summary.framesDecoded) frames in \(seconds) s")
            #expect(Double(summary.audioReceived) >= 0.7 * InteropCell.opusFramesPerSecond * seconds,
                    "aiortc received \(summary.audioReceived) audio frames in \(seconds) s")
            #expect(summary.videoCodecIn?.lowercased() == "video/" + cell.codec.lowercased(), "aiortc received \(summary.videoCodecIn ?? "no video")")
        }

        /// Both parties' video and audio are in ECVKit's recording (the far end's is what ECVKit
        /// received), most of the frames the call's media time holds.
        static func expectRemoteMedia(in info: RecordedFileInfo, seconds: Double) {
            #expect(info.videoTracks.count == 2 && info.audioTracks.count == 2, "\(info.tracks.map(\.pad))")
            for track in info.videoTracks + info.audioTracks {
                let rate = track.isVideo ? InteropCell.fps : InteropCell.opusFramesPerSecond
                #expect(Double(track.frames) >= 0.6 * rate * seconds, "\(track.pad) (\(track.title ?? "?")): \(track.frames) frames")
            }
        }

        @discardableResult
        static func waitForLine(of process: ForeignPeer, containing text: String, timeout: Duration = .seconds(40)) async throws -> String {
            let deadline = ContinuousClock.now + timeout
            while ContinuousClock.now < deadline {
                if let line = process.output.first(where: { $0.contains(text) }) { return line }
                if process.exitStatus != nil { break }
                try await Task.sleep(for: .milliseconds(50))
            }
            throw TestFailure("\(process.name): no line with \(text) within \(timeout)")
        }

        static func waitForExit(of process: ForeignPeer, timeout: Duration = .seconds(30)) async throws {
            let deadline = ContinuousClock.now + timeout
            while process.isRunning, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(100)) }
            if process.isRunning { throw TestFailure("\(process.name) still runs after \(timeout)") }
        }

        static func field(_ name: String, in line: String) -> String? {
            (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?[name] as? String
        }
    }
}
