import Foundation
import MediaPipeline
import Testing

/// The energy detector on synthetic audio: a noise floor, then a tone, then the floor again.
@Suite struct VoiceActivityDetectorTests {
    /// 10 ms frames at 16 kHz: `amplitude` 0 is low noise, otherwise a 300 Hz tone.
    static func frames(seconds: Double, amplitude: Double, from start: UInt64, seed: inout UInt64) throws -> [AudioFrame] {
        let format = try AudioFormat(sampleRate: 16000, channels: 1, sampleFormat: .s16, frameMilliseconds: 10)
        var frames: [AudioFrame] = []
        var pts = start
        for _ in 0..<Int(seconds * 100) {
            var samples: [Int16] = []
            for index in 0..<160 {
                seed = seed &* 6364136223846793005 &+ 1442695040888963407
                let noise = Double(Int64(bitPattern: seed) >> 40) / Double(1 << 23) * 30
                let tone = amplitude * 32767 * sin(2 * Double.pi * 300 * Double(index) / 16000)
                samples.append(Int16(max(-32767, min(32767, noise + tone))))
            }
            let clip = try AudioClip(samples: samples, sampleRate: 16000)
            frames.append(try AudioFrame(format: format, pts: pts, data: clip.data))
            pts += 10_000_000
        }
        return frames
    }

    @Test func speechStartsAtTheFirstLoudFrameAndStopsAfterTheHangover() throws {
        var seed: UInt64 = 7
        let options = try VoiceActivityOptions(hangover: .milliseconds(300))
        var detector = VoiceActivityDetector(options: options)
        let audio = try Self.frames(seconds: 1, amplitude: 0, from: 0, seed: &seed)
            + Self.frames(seconds: 1, amplitude: 0.3, from: 1_000_000_000, seed: &seed)
            + Self.frames(seconds: 1, amplitude: 0, from: 2_000_000_000, seed: &seed)
        let events = audio.compactMap { detector.process($0) }
        #expect(events == [.started(at: 1_000_000_000), .stopped(at: 2_000_000_000, reportedAt: 2_300_000_000)])
    }

    @Test func clicksShorterThanTheMinimumSpeechAreNotSpeech() throws {
        var seed: UInt64 = 9
        var detector = VoiceActivityDetector(options: try VoiceActivityOptions(minimumSpeech: .milliseconds(100)))
        let audio = try Self.frames(seconds: 0.5, amplitude: 0, from: 0, seed: &seed)
            + Self.frames(seconds: 0.05, amplitude: 0.5, from: 500_000_000, seed: &seed)
            + Self.frames(seconds: 0.5, amplitude: 0, from: 550_000_000, seed: &seed)
        #expect(audio.compactMap { detector.process($0) }.isEmpty)
    }

    @Test func optionsOutsideTheirRangesAreRefused() {
        #expect(throws: AppMediaError.self) { try VoiceActivityOptions(threshold: 2) }
        #expect(throws: AppMediaError.self) { try VoiceActivityOptions(hangover: .seconds(10)) }
        #expect(throws: AppMediaError.self) { try AudioFormat(sampleRate: 44100) }
        #expect(throws: AppMediaError.self) { try AudioFormat(frameMilliseconds: 30) }
        #expect(throws: AppMediaError.self) { try AudioFrame(format: .speech, pts: 0, data: [1, 2, 3]) }
        #expect(throws: AppMediaError.self) { try SpeechText.validated("   ") }
        #expect(throws: AppMediaError.self) { try SpeechText.validated(String(repeating: "a", count: 5000)) }
    }

    @Test func transcriptsMatchWholeWords() {
        let transcript = Transcript(text: "Please TRANSFER me to billing", isFinal: true, start: 0, end: 1)
        #expect(transcript.contains(words: "transfer me"))
        #expect(!transcript.contains(words: "transf"))
        #expect(!transcript.contains(words: ""))
    }
}
