import ECVSpeech
import Foundation
import GLibCore
import GStreamer
import MediaPipeline
import MediaTestSupport
import Testing
@testable import WebRTC

/// Real speech through a real call (two peers on loopback): espeak-ng's voice played into one
/// end, pocketsphinx with a phrase grammar listening at the other, both ways.
@Suite(.serialized) struct SpeechCallTests {
    static let phrases = SpeechEngineTests.phrases

    static func media() -> MediaConfiguration {
        var parameters = MediaParameters(videoCallEnabled: false, noAudioProcessing: true)
        parameters.applicationAudio = true
        return MediaConfiguration(parameters: parameters, audio: .silence, receiveAudio: .discard)
    }

    /// A caller (offerer) and a bot (answerer) with `media()`, connected over loopback signaling.
    static func connectedPair() async throws -> (caller: PeerConnection, bot: PeerConnection, signaling: LoopbackSignaling) {
        try GStreamerRuntime.ensureInitialized()
        let signaling = LoopbackSignaling()
        let caller = PeerConnection(configuration: PeerConfiguration(media: media()), role: .offerer, sendSignaling: signaling.first.send)
        let bot = PeerConnection(configuration: PeerConfiguration(media: media()), role: .answerer, sendSignaling: signaling.second.send)
        signaling.connectFirst(to: caller)
        signaling.connectSecond(to: bot)
        try await bot.start()
        try await caller.start()
        try await eventually(.seconds(15), "connected") {
            let states = (await caller.peerState, await bot.peerState)
            return states.0 == .connected && states.1 == .connected
        }
        return (caller, bot, signaling)
    }

    @Test func eachEndHearsWhatTheOtherSays() async throws {
        let (caller, bot, signaling) = try await Self.connectedPair()
        let voice = try ESpeakSynthesizer()
        let botHears = try await bot.listen(with: try PocketSphinxTranscriber(vocabulary: .phrases(Self.phrases)))
        let callerHears = try await caller.listen(with: try PocketSphinxTranscriber(vocabulary: .phrases(Self.phrases)))

        _ = try await caller.say("Transfer me to billing", with: voice)
        let atBot = try await Self.firstTranscript(botHears)
        #expect(atBot.contains(words: "transfer me to billing"), "the bot heard \"\(atBot.text)\"")

        _ = try await bot.say("Thank you for calling", with: voice)
        let atCaller = try await Self.firstTranscript(callerHears)
        #expect(atCaller.contains(words: "thank you for calling"), "the caller heard \"\(atCaller.text)\"")
        #expect(atCaller.end > atCaller.start)
        await caller.close()
        await bot.close()
        signaling.close()
    }

    static func firstTranscript(_ heard: AsyncStream<Heard>) async throws -> Transcript {
        let task = Task { () -> Transcript? in
            for await event in heard { if case .transcript(let transcript) = event, transcript.isFinal { return transcript } }
            return nil
        }
        let found = try await withThrowingTaskGroup(of: Transcript?.self) { group in
            group.addTask { await withTaskCancellationHandler { await task.value } onCancel: { task.cancel() } }
            group.addTask { try await Task.sleep(for: .seconds(15)); return nil }
            let first = try await group.next() ?? nil
            group.cancelAll()
            return first
        }
        return try #require(found, "no transcript within 15 s")
    }
}
