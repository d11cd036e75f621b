import ECV
import ECVAgent
import ECVSpeech
import ECVTestSupport
import Foundation
import Testing

extension InteropTests {
    /// Real speech with a browser, both ways: headless Chromium's fake microphone plays an espeak-ng
    /// phrase (`--use-file-for-fake-audio-capture`), and ECVKit's agent bot, listening with
    /// pocketsphinx and a phrase grammar, hears its words; the bot says a phrase of its own, and
    /// the audio the page received (WebAudio on the remote stream, handed back as a WAV file),
    /// transcribed the same way, holds it.
    @Suite("Interop: a Chromium caller and ECVKit's bot hear each other's speech", .serialized)
    struct SpeechInteropTests {
        @Test(.enabled(if: InteropEnvironment.hasChromium, Comment(rawValue: InteropEnvironment.missingChromium)))
        func theBotAndChromiumHearWhatTheOtherSays() async throws {
            let wav = FileManager.default.temporaryDirectory.appendingPathComponent("ecv-speech-\(UUID().uuidString.prefix(8)).wav")
            let received = FileManager.default.temporaryDirectory.appendingPathComponent("ecv-heard-\(UUID().uuidString.prefix(8)).wav")
            defer { try? FileManager.default.removeItem(at: received) }
            let espeak = Process()
            espeak.executableURL = URL(fileURLWithPath: "/usr/bin/espeak-ng")
            // A second and a half of silence after the phrase: the file loops, and the detector ends an
            // utterance only after a pause.
            espeak.arguments = ["-m", "-w", wav.path, "<speak>Transfer me to billing.<break time=\"1500ms\"/></speak>"]
            try espeak.run()
            espeak.waitUntilExit()
            #expect(espeak.terminationStatus == 0)
            defer { try? FileManager.default.removeItem(at: wav) }

            let backend = try await Backend.start()
            let agent = try await backend.agent(configure: { configuration in
                configuration.parameters = ConnectParameters(videoWidth: 640, videoHeight: 480, noAudioProcessing: true)
                configuration.parameters.media.applicationAudio = true
                configuration.audio = .silence // only the bot's speech in the page's recording
            })
            let sdk = try backend.sdk()
            let call = try #require(await sdk.createVideoCall())
            await call.start(dialCallParameters: DialCallParameters(callerName: "Jane"))
            let room = call.rtcId
            var caller: ForeignPeer?
            do {
                try await eventually(.seconds(15), "the bot joined room \(room) first") {
                    agent.call(rtcId: room)?.eventHistory.contains(.joinedRoom(initiator: true)) == true
                }
                var page = URLComponents(string: backend.url + "/r/" + room)
                page?.queryItems = [URLQueryItem(name: "role", value: "caller"), URLQueryItem(name: "codec", value: "VP8"),
                                    URLQueryItem(name: "token", value: call.callerToken)]
                caller = try ForeignPeer(script: "chromium_peer.py",
                                         arguments: ["--page", try #require(page?.string), "--duration", "14", "--audio-file", wav.path,
                                                     "--record-audio", received.path],
                                         name: "chromium")
                let agentCall = try #require(agent.call(rtcId: room))
                try await eventually(.seconds(30), "ECVKit's agent call connected") { agentCall.isConnected }
                let ears = try PocketSphinxTranscriber(vocabulary: .phrases(["transfer me to billing", "hello", "goodbye", "please hold"]))
                let heard = try await agentCall.listen(with: ears)
                // The file loops (phrase, pause): listening starts anywhere in it, so the first
                // utterance may be cut; the next ones are whole.
                let listening = Task { () -> [Transcript] in
                    var utterances: [Transcript] = []
                    for await event in heard {
                        guard case .transcript(let transcript) = event, transcript.isFinal else { continue }
                        utterances.append(transcript)
                        if utterances.count == 4 { break }
                    }
                    return utterances
                }
                // The bot speaks while it listens (the page records from its channel's opening on).
                let voice = try ESpeakSynthesizer()
                for _ in 0..<2 {
                    let said = try await agentCall.say("Thank you for calling", with: voice)
                    _ = await said.finished()
                    try await Task.sleep(for: .seconds(1))
                }
                let utterances = try await withThrowingTaskGroup(of: [Transcript]?.self) { group in
                    group.addTask { await withTaskCancellationHandler { await listening.value } onCancel: { listening.cancel() } }
                    group.addTask { try await Task.sleep(for: .seconds(25)); return nil }
                    let first = try await group.next() ?? nil
                    group.cancelAll()
                    return first ?? []
                }
                let whole = utterances.dropFirst()
                let heardRight = whole.filter { $0.contains(words: "transfer me to billing") }
                #expect(whole.count == 3, "three whole utterances in 25 s: \(utterances.map(\.text))")
                #expect(heardRight.count >= 2, "the bot heard the phrase in most whole utterances: \(utterances.map(\.text))")
                print("interop Chromium speech → ECVKit bot: heard \(utterances.map { "\"\($0.text)\"" }.joined(separator: ", "))")

                let summary = try await #require(caller).summary(peer: .chromium, timeout: .seconds(30))
                #expect(summary.ok, "the Chromium caller: \(summary.errors)")
                let atCaller = try Self.transcribe(wav: received)
                #expect(atCaller.contains { $0.contains(words: "thank you for calling") }, "the page received \(atCaller.map(\.text))")
                print("interop ECVKit bot speech → Chromium: heard \(atCaller.map { "\"\($0.text)\"" }.joined(separator: ", "))")
            } catch {
                Issue.record(Comment(rawValue: "\(error)\ncaller:\n\(caller?.transcript ?? "-")"))
            }
            await caller?.finish()
            call.hangup()
            await backend.close()
        }

        /// The words in a 16-bit mono WAV file (the page's recording), by the same phrase grammar,
        /// one transcript per stretch of sound (20 ms frames above -40 dBFS, 300 ms of quiet apart).
        static func transcribe(wav: URL) throws -> [Transcript] {
            let bytes = [UInt8](try Data(contentsOf: wav))
            // RIFF chunks after the 12-byte header: the format's rate, then the samples.
            var offset = 12, rate = 0
            var samples: [Int16] = []
            while offset + 8 <= bytes.count {
                let id = String(decoding: bytes[offset..<offset + 4], as: UTF8.self)
                let size = Int(bytes[offset + 4]) | Int(bytes[offset + 5]) << 8 | Int(bytes[offset + 6]) << 16 | Int(bytes[offset + 7]) << 24
                let body = offset + 8
                guard body + size <= bytes.count else { break }
                if id == "fmt ", size >= 8 { rate = Int(bytes[body + 4]) | Int(bytes[body + 5]) << 8 | Int(bytes[body + 6]) << 16 }
                if id == "data" {
                    samples = stride(from: body, to: body + size - 1, by: 2).map { Int16(bitPattern: UInt16(bytes[$0]) | UInt16(bytes[$0 + 1]) << 8) }
                }
                offset = body + size + size % 2
            }
            #expect(rate == 16000 && samples.count > 16000, "a recording of \(samples.count) samples at \(rate) Hz")
            let frame = 320
            let loud = stride(from: 0, to: samples.count - frame + 1, by: frame).map { start in
                let energy = samples[start..<start + frame].reduce(0.0) { $0 + Double($1) * Double($1) } / Double(frame)
                return 10 * log10(max(energy, 1) / (32768.0 * 32768.0)) > -40
            }
            var stretches: [Range<Int>] = []
            for (index, isLoud) in loud.enumerated() where isLoud {
                if let last = stretches.last, index - last.upperBound < 15 {
                    stretches[stretches.count - 1] = last.lowerBound..<index + 1
                } else {
                    stretches.append(index..<index + 1)
                }
            }
            let ears = try PocketSphinxTranscriber(vocabulary: .phrases(["thank you for calling", "transfer me to billing", "hello", "goodbye", "please hold"]))
            print("interop: the page's recording, \(samples.count / rate) s, has \(stretches.count) stretches of sound")
            return try stretches.filter { $0.count >= 10 }.map { stretch in
                // 200 ms of quiet around each, as the bot's own listening keeps.
                let start = max(0, (stretch.lowerBound - 10) * frame), end = min(samples.count, (stretch.upperBound + 10) * frame)
                return try ears.transcribe(try AudioClip(samples: Array(samples[start..<end]), sampleRate: rate))
            }
        }
    }
}
