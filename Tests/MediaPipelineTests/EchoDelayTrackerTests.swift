import Foundation
@testable import MediaPipeline
import Testing

/// The echo tracker and the detector's echo gate on synthetic speech-like envelopes: syllables of
/// 80-250 ms at -26…-14 dBFS between pauses, played by the bot and coming back (or not).
@Suite struct EchoDelayTrackerTests {
    static let bin = EchoDelayTracker.bin

    /// A speech-like envelope of `bins` 10 ms levels.
    static func syllables(bins: Int, seed: UInt64) -> [Double] {
        var state = seed
        func next(_ range: ClosedRange<Int>) -> Int {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return range.lowerBound + Int((state >> 33) % UInt64(range.count))
        }
        var levels: [Double] = []
        while levels.count < bins {
            let loud = next(8...25), quiet = next(5...30), base = Double(next(-26 ... -14))
            for _ in 0..<loud { levels.append(base + Double(next(-3...3))) }
            for _ in 0..<quiet { levels.append(-.infinity) }
        }
        return Array(levels.prefix(bins))
    }

    /// The far end: `played` back `delayBins` later and `returnLoss` dB quieter, over a -65 dBFS floor.
    static func echoed(_ played: [Double], delayBins: Int, returnLoss: Double) -> [Double] {
        played.indices.map { index in
            let back = index - delayBins
            guard back >= 0, played[back].isFinite else { return -65 }
            return max(-65, played[back] - returnLoss)
        }
    }

    @Test func aKnownDelayComesOut() {
        for (delayBins, returnLoss) in [(37, 10.0), (62, 3.0), (85, 15.0)] {
            var tracker = EchoDelayTracker()
            let played = Self.syllables(bins: 400, seed: UInt64(delayBins))
            let far = Self.echoed(played, delayBins: delayBins, returnLoss: returnLoss)
            for index in played.indices {
                tracker.addReference(level: played[index], pts: UInt64(index) * Self.bin, duration: Self.bin)
                tracker.addFarEnd(level: far[index], pts: UInt64(index) * Self.bin, duration: Self.bin)
            }
            guard case .echo(let delay, let loss, let correlation) = tracker.verdict else {
                Issue.record("no echo found at \(delayBins * 10) ms: \(tracker.verdict)")
                continue
            }
            #expect(delay == UInt64(delayBins) * Self.bin)
            #expect(abs(loss - returnLoss) < 1.5, "return loss \(loss) against \(returnLoss)")
            #expect(correlation > 0.8)
        }
    }

    /// A tracker fed `played` (nil: the bot quiet) and the far end speaking on its own.
    static func trackerBesideAFarEndOfItsOwn(played: [Double]?) -> EchoDelayTracker {
        var tracker = EchoDelayTracker()
        let other = syllables(bins: 400, seed: 99)
        for index in other.indices {
            if let played { tracker.addReference(level: played[index], pts: UInt64(index) * bin, duration: bin) }
            tracker.addFarEnd(level: max(-65, other[index]), pts: UInt64(index) * bin, duration: bin)
        }
        return tracker
    }

    @Test func aFarEndThatDoesNotEchoGivesNoEstimate() {
        let tracker = Self.trackerBesideAFarEndOfItsOwn(played: Self.syllables(bins: 400, seed: 3))
        #expect(tracker.verdict == .noEcho)
        #expect(tracker.predictedEchoLevel(at: 399 * Self.bin) == nil)
    }

    @Test func theFarEndTakingTheTurnIsNoEcho() {
        // The bot speaks 2 s and stops; the far end, quiet until then, speaks from 1.9 s on.
        var tracker = EchoDelayTracker()
        let played = Self.syllables(bins: 200, seed: 41), other = Self.syllables(bins: 210, seed: 43)
        for index in 0..<400 {
            tracker.addReference(level: index < 200 ? played[index] : -.infinity, pts: UInt64(index) * Self.bin, duration: Self.bin)
            tracker.addFarEnd(level: index >= 190 ? max(-65, other[index - 190]) : -65, pts: UInt64(index) * Self.bin, duration: Self.bin)
            if case .echo = tracker.verdict { Issue.record("an echo at \(index * 10) ms: \(tracker.verdict)"); return }
        }
    }

    @Test func nothingIsEstimatedWhileTheBotIsQuiet() {
        let tracker = Self.trackerBesideAFarEndOfItsOwn(played: nil)
        #expect(tracker.verdict == .unknown)
        #expect(tracker.predictedEchoLevel(at: 399 * Self.bin) == nil)
    }

    @Test func aTrackerThatBeginsLateDoesNotJudgeFromAudioItDidNotHear() {
        var tracker = EchoDelayTracker()
        let played = Self.syllables(bins: 400, seed: 8)
        for index in played.indices {
            tracker.addReference(level: played[index], pts: UInt64(index) * Self.bin, duration: Self.bin)
        }
        // The far end's frames only from 3.5 s on: half a second of the echo's tail, then quiet.
        for index in 350..<400 {
            tracker.addFarEnd(level: -65, pts: UInt64(index) * Self.bin, duration: Self.bin)
        }
        #expect(tracker.verdict == .unknown)
    }

    @Test func beforeAVerdictTheEchoIsAssumedNineDecibelsBelowTheLastSecondOfReference() {
        var tracker = EchoDelayTracker()
        tracker.addReference(level: -12, pts: 0, duration: 20_000_000)
        tracker.addReference(level: -30, pts: 500_000_000, duration: 10_000_000)
        #expect(tracker.verdict == .unknown)
        #expect(tracker.predictedEchoLevel(at: 900_000_000) == -21)
        #expect(tracker.predictedEchoLevel(at: 1_200_000_000) == -39)
        #expect(tracker.predictedEchoLevel(at: 1_600_000_000) == nil)
    }

    /// A 10 ms frame of a 300 Hz tone at `level` dBFS.
    static func frame(level: Double, at index: Int) throws -> AudioFrame {
        let format = try AudioFormat(sampleRate: 16000, channels: 1, sampleFormat: .s16, frameMilliseconds: 10)
        let amplitude = level.isFinite ? pow(10, level / 20) * 2.0.squareRoot() * 32767 : 0
        let samples = (0..<160).map { Int16(amplitude * sin(2 * Double.pi * 300 * Double($0) / 16000)) }
        return try AudioFrame(format: format, pts: UInt64(index) * bin, data: try AudioClip(samples: samples, sampleRate: 16000).data)
    }

    /// The bot plays 4 s; the far end sends it back 280 ms later 6 dB quieter, and from 3 s on
    /// (when `talks`) also speaks a steady tone at -14 dBFS.
    static func starts(ignoringEcho: Bool, talks: Bool) throws -> [UInt64] {
        let played = syllables(bins: 400, seed: 11)
        let far = echoed(played, delayBins: 28, returnLoss: 6)
        let playedAudio = PlayedAudioLevels()
        var detector = VoiceActivityDetector(options: try VoiceActivityOptions(ignoresOwnEcho: ignoringEcho), playedAudio: playedAudio)
        var starts: [UInt64] = []
        for index in 0..<500 {
            if index < played.count { playedAudio.record(try frame(level: played[index], at: index)) }
            var level = index < far.count ? far[index] : -65
            if talks, index >= 300 { level = 10 * log10(pow(10, level / 10) + pow(10, -1.4)) }
            if case .started(let at)? = detector.process(try frame(level: level, at: index)) { starts.append(at) }
        }
        return starts
    }

    @Test func theBotsOwnEchoIsNotSpeechButTheFarEndOverItIs() throws {
        #expect(try Self.starts(ignoringEcho: false, talks: false).count >= 1)
        #expect(try Self.starts(ignoringEcho: true, talks: false) == [])
        let barging = try Self.starts(ignoringEcho: true, talks: true)
        #expect(barging.count == 1)
        #expect(barging.allSatisfy { $0 >= 3_000_000_000 }, "started at \(barging)")
    }

    @Test func aDelayThatMovesWhileThePromptPlaysIsFollowed() throws {
        let played = Self.syllables(bins: 800, seed: 31)
        // 250 ms for the first 4 s, then 400 ms (a far end whose playout took a longer lead).
        let early = Self.echoed(played, delayBins: 25, returnLoss: 6), late = Self.echoed(played, delayBins: 40, returnLoss: 6)
        let far = played.indices.map { $0 < 400 ? early[$0] : late[$0] }
        let playedAudio = PlayedAudioLevels()
        var detector = VoiceActivityDetector(options: .standard, playedAudio: playedAudio)
        var starts: [VoiceActivity] = []
        for index in 0..<900 {
            if index < played.count { playedAudio.record(try Self.frame(level: played[index], at: index)) }
            if let event = detector.process(try Self.frame(level: index < far.count ? far[index] : -65, at: index)), case .started = event {
                starts.append(event)
            }
        }
        #expect(starts.isEmpty, "started on its own echo: \(starts)")
        guard case .echo(let delay, _, _)? = detector.echoVerdict else {
            Issue.record("no echo found: \(String(describing: detector.echoVerdict))")
            return
        }
        #expect(delay == 400_000_000)
    }

    @Test func aLaterDetectorBeginsFromTheEchoPathAnEarlierOneFound() throws {
        let playedAudio = PlayedAudioLevels()
        var first = VoiceActivityDetector(options: .standard, playedAudio: playedAudio)
        let played = Self.syllables(bins: 400, seed: 21)
        let far = Self.echoed(played, delayBins: 30, returnLoss: 8)
        for index in played.indices {
            playedAudio.record(try Self.frame(level: played[index], at: index))
            _ = first.process(try Self.frame(level: far[index], at: index))
        }
        guard case .echo(let delay, _, _)? = first.echoVerdict else {
            Issue.record("no echo found: \(String(describing: first.echoVerdict))")
            return
        }
        #expect(delay == 300_000_000)
        #expect(playedAudio.echoPath == first.echoVerdict)
        #expect(VoiceActivityDetector(options: .standard, playedAudio: playedAudio).echoVerdict == first.echoVerdict)
        #expect(VoiceActivityDetector(options: try VoiceActivityOptions(ignoresOwnEcho: false), playedAudio: playedAudio).echoVerdict == nil)
    }

    @Test func playedLevelsAreReadOnceEachInTenMillisecondPieces() throws {
        let playedAudio = PlayedAudioLevels()
        let format = try AudioFormat(sampleRate: 16000, channels: 1, sampleFormat: .s16, frameMilliseconds: 20)
        let loud = (0..<160).map { _ in Int16(8000) }, quiet = (0..<160).map { _ in Int16(0) }
        playedAudio.record(try AudioFrame(format: format, pts: 40_000_000, data: try AudioClip(samples: loud + quiet, sampleRate: 16000).data))
        let (first, next) = playedAudio.levels(after: 0)
        #expect(first.map(\.pts) == [40_000_000, 50_000_000])
        #expect(abs(first[0].level - 20 * log10(8000.0 / 32768)) < 0.01)
        #expect(first[1].level == -.infinity)
        #expect(playedAudio.levels(after: next).levels.isEmpty)
    }
}
