import ECVSpeech
import Foundation
import MediaPipeline
import Testing

/// espeak-ng and pocketsphinx on their own: a spoken phrase comes back as its words.
@Suite struct SpeechEngineTests {
    static let phrases = ["hello", "transfer me to billing", "please hold", "goodbye", "yes", "no", "thank you for calling"]

    @Test func espeakSpeechIsRecognisedByThePhraseGrammar() async throws {
        let voice = try ESpeakSynthesizer()
        let clip = try await voice.synthesize("Transfer me to billing")
        #expect(clip.duration > .milliseconds(800) && clip.duration < .seconds(4), "\(clip.duration)")
        let transcriber = try PocketSphinxTranscriber(vocabulary: .phrases(Self.phrases))
        let transcript = try transcriber.transcribe(clip)
        #expect(transcript.contains(words: "transfer me to billing"), "heard \"\(transcript.text)\"")
        #expect(transcript.isFinal)
    }

    @Test func badInputIsRefused() async throws {
        #expect(throws: AppMediaError.self) { try PocketSphinxTranscriber(vocabulary: .phrases(["xyzzyq plugh"])) }
        #expect(throws: AppMediaError.self) { try PocketSphinxTranscriber(vocabulary: .phrases(["hello; world"])) }
        #expect(throws: AppMediaError.self) { try PocketSphinxTranscriber(vocabulary: .phrases([])) }
        #expect(throws: AppMediaError.self) { try ESpeakSynthesizer(voice: "en us;rm") }
        await #expect(throws: AppMediaError.self) { try await ESpeakSynthesizer().synthesize("") }
    }
}
