import ECV
import ECVAgent
import ECVSpeech
import ECVTestSupport
import Foundation
import Testing

extension InteropTests {
    /// Real speech from a browser: headless Chromium's fake microphone plays an espeak-ng phrase
    /// (`--use-file-for-fake-audio-capture`), and ECVKit's agent bot, listening with pocketsphinx and
    /// a phrase grammar, hears its words.
    @Suite("Interop: a Chromium caller's speech reaches ECVKit's listening bot", .serialized)
    struct SpeechInteropTests {
        @Test(.enabled(if: InteropEnvironment.hasChromium, Comment(rawValue: InteropEnvironment.missingChromium)))
        func theBotHearsWhatChromiumsMicrophoneSays() async throws {
            let wav = FileManager.default.temporaryDirectory.appendingPathComponent("ecv-speech-\(UUID().uuidString.prefix(8)).wav")
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
                                         arguments: ["--page", try #require(page?.string), "--duration", "10", "--audio-file", wav.path],
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
            } catch {
                Issue.record(Comment(rawValue: "\(error)\ncaller:\n\(caller?.transcript ?? "-")"))
            }
            await caller?.finish()
            call.hangup()
            await backend.close()
        }
    }
}
