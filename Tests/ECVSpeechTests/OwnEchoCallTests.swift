import ECVSpeech
import Foundation
import GLibCore
import GStreamer
import MediaPipeline
import MediaRuntime
import MediaTestSupport
import Synchronization
import Testing
@testable import WebRTC

/// The bot's own prompt coming back from a far end without echo cancellation (a speakerphone):
/// the far end here plays everything it hears back into the call, 10 dB quieter, at a steady delay
/// (its playout starts 200 ms ahead, so it seldom grows its lead), and can speak a phrase of its
/// own over it. With `ignoresOwnEcho` the bot's detector does not start on its
/// prompt; without it, it does; and the far end speaking over the prompt still barges in.
@Suite(.serialized) struct OwnEchoCallTests {
    static let prompt = "Welcome to the billing line. Please hold while I look up your account and the last payment we received from you."

    /// The far end's loop: the bot's audio back, 10 dB down, plus the phrase when one is queued.
    final class EchoingFarEnd: Sendable {
        /// Phrase samples still to mix in.
        let phrase = Mutex<ArraySlice<Int16>>([])

        func loop(_ heard: AudioFrameStream) -> AudioPlayout.Input {
            .frames { each in
                for await frame in heard {
                    let samples = frame.int16Samples
                    let spoken = self.phrase.withLock { pending in
                        defer { pending = pending.dropFirst(samples.count) }
                        return Array(pending.prefix(samples.count))
                    }
                    let mixed = samples.indices.map { index in
                        let echo = Int32(samples[index]) * 10 / 32
                        let voice = index < spoken.count ? Int32(spoken[index]) : 0
                        return Int16(max(-32767, min(32767, echo + voice)))
                    }
                    try await each(AudioFrame(trusted: frame.format, pts: frame.pts, data: try AudioClip(samples: mixed).data))
                }
            }
        }
    }

    /// Voice activity events as they come.
    final class Events: Sendable {
        let seen = Mutex<[VoiceActivity]>([])
        var starts: Int { seen.withLock { $0.filter { if case .started = $0 { true } else { false } }.count } }

        init(_ stream: AsyncStream<VoiceActivity>) {
            Task { [self] in for await event in stream { self.seen.withLock { $0.append(event) } } }
        }
    }

    /// Follows the echo's delay as the bot hears it: the tracker the detectors use, on its own.
    final class DelayLog: Sendable {
        let verdicts = Mutex<[(pts: UInt64, verdict: EchoDelayTracker.Verdict)]>([])
        let lastPTS = Atomic<UInt64>(0)

        init(_ audio: AudioFrameStream, played: PlayedAudioLevels) {
            Task { [self] in
                var tracker = EchoDelayTracker()
                var position = 0
                for await frame in audio {
                    let (levels, next) = played.levels(after: position)
                    position = next
                    for item in levels { tracker.addReference(level: item.level, pts: item.pts, duration: EchoDelayTracker.bin) }
                    tracker.addFarEnd(level: frame.levelDBFS, pts: frame.pts, duration: frame.duration)
                    self.verdicts.withLock { $0.append((frame.pts, tracker.verdict)) }
                    self.lastPTS.store(frame.pts, ordering: .relaxed)
                }
            }
        }

        var delays: [UInt64] {
            verdicts.withLock { $0.compactMap { if case .echo(let delay, _, _) = $0.verdict { delay } else { nil } } }
        }
    }

    @Test func theBotDoesNotHearItsOwnPromptButHearsTheFarEndOverIt() async throws {
        let (farEnd, bot, signaling) = try await SpeechCallTests.connectedPair()
        let echoing = EchoingFarEnd()
        _ = try await farEnd.play(echoing.loop(try await farEnd.farEndAudio(format: .speech)), mode: .replace, label: "echo", lead: 200_000_000)
        let ignoring = Events(try await bot.voiceActivity(options: .standard))
        let hearing = Events(try await bot.voiceActivity(options: try VoiceActivityOptions(ignoresOwnEcho: false)))
        let delays = DelayLog(try await bot.farEndAudio(format: WebRTC.PeerConnection.voiceActivityFormat, capacity: 1000),
                              played: await bot.applicationMedia.playedAudio)
        let voice = try ESpeakSynthesizer()
        let prompt = try await voice.synthesize(Self.prompt)

        // The prompt alone: its echo starts the detector that hears it, not the one that ignores it.
        let first = try await bot.play(.clip(prompt), label: "prompt")
        #expect(await first.finished() == .completed)
        let end = try #require(first.startedAt) + UInt64(prompt.duration.components.seconds) * 1_000_000_000 + 1_500_000_000
        try await eventually(.seconds(20), "the echo's tail heard") { delays.lastPTS.load(ordering: .relaxed) > end }
        let measured = delays.delays
        print("echo delay over the prompt: \(measured.count) frames with an echo verdict, \(measured.min().map { $0 / 1_000_000 } ?? 0)-\(measured.max().map { $0 / 1_000_000 } ?? 0) ms")
        #expect(hearing.starts >= 1, "the detector without the echo check never started: \(hearing.seen.withLock { $0 })")
        #expect(ignoring.starts == 0, "the bot heard its own prompt: \(ignoring.seen.withLock { $0 })")
        #expect(!measured.isEmpty, "no echo delay found")

        // The far end speaks 2 s into the prompt: it barges in.
        try await bot.setBargeIn(.standard)
        let second = try await bot.play(.clip(prompt), label: "prompt")
        let botPipeline = try #require(await bot.mediaPipeline)
        try await eventually(.seconds(10), "2 s of the prompt played") {
            guard let started = second.startedAt, let now = botPipeline.runningTime else { return false }
            return now.nanoseconds > Int64(started) + 2_000_000_000
        }
        let early = await bot.bargeIns
        #expect(early.isEmpty, "the bot's own echo barged in: \(early)")
        let phrase = try await voice.synthesize("Transfer me to billing")
        echoing.phrase.withLock { $0 = ArraySlice(phrase.frames().flatMap(\.int16Samples)) }
        try await eventually(.seconds(10), "the prompt interrupted") { second.outcome != nil }
        if case .interrupted = second.outcome {} else {
            Issue.record("the far end speaking over the prompt did not stop it: \(String(describing: second.outcome))")
        }
        #expect(await bot.bargeIns.count == 1)
        await farEnd.close()
        await bot.close()
        signaling.close()
    }
}
