import Foundation
import GLibCore
import GStreamer
import MediaPipeline
import MediaRuntime
import MediaTestSupport
import Testing
@testable import WebRTC

/// Application audio on real peers over loopback: audio played into one end's call (clips,
/// streams, interrupts) arrives at the other end's audio tap as PCM frames on the call's timeline.
@Suite(.serialized) struct ApplicationAudioTests {
    /// An audio-only pair: the offerer listens, the answerer (silent source) plays.
    static func pair(processing: Bool = false) -> PeerPair {
        var speaker = testMedia(videoEnabled: false, audio: .silence)
        speaker.parameters.applicationAudio = true
        speaker.parameters.noAudioProcessing = !processing
        return PeerPair(offerer: testMedia(videoEnabled: false, audio: .silence), answerer: speaker)
    }

    /// A sine tone clip at 16 kHz mono.
    static func tone(seconds: Double, frequency: Double = 440, amplitude: Double = 0.5) throws -> AudioClip {
        let count = Int(seconds * 16000)
        return try AudioClip(samples: (0..<count).map { Int16(amplitude * 32767 * sin(2 * Double.pi * frequency * Double($0) / 16000)) })
    }

    /// Collects frames from `stream` and their levels.
    final class Listener: Sendable {
        let frames = Locked<[(pts: UInt64, level: Double, bytes: Int)]>([])
        let task: Task<Void, Never>
        init(_ stream: AudioFrameStream) {
            let frames = frames
            task = Task { for await frame in stream { frames.withLock { $0.append((frame.pts, frame.levelDBFS, frame.data.count)) } } }
        }
        deinit { task.cancel() }
        /// The span of loud frames (level above -30 dBFS) after `after`.
        func loudSpan(after: UInt64 = 0) -> (first: UInt64, last: UInt64, count: Int)? {
            let loud = frames.value.filter { $0.pts >= after && $0.level > -30 }
            guard let first = loud.first, let last = loud.last else { return nil }
            return (first.pts, last.pts, loud.count)
        }
    }

    @Test func aPlayedClipArrivesAtTheFarEndAsFramesInTheAskedFormat() async throws {
        let pair = Self.pair()
        try await pair.start()
        try await waitFor(.connected, on: pair.offerer)
        let format = try AudioFormat(sampleRate: 16000, channels: 1, sampleFormat: .s16, frameMilliseconds: 20)
        let stream = try await pair.offerer.farEndAudio(format: format)
        let stereo = try await pair.offerer.farEndAudio(format: AudioFormat(sampleRate: 48000, channels: 2, sampleFormat: .f32, frameMilliseconds: 10))
        let listener = Listener(stream), stereoListener = Listener(stereo)
        try await eventually(.seconds(10), "far-end frames") { listener.frames.value.count > 10 && stereoListener.frames.value.count > 10 }
        #expect(listener.loudSpan() == nil, "the far end is silent before anything plays")
        let playback = try await pair.answerer.play(.clip(try Self.tone(seconds: 1)), label: "tone")
        let outcome = try await value(of: Task { await playback.finished() }, within: .seconds(5), "the clip played")
        #expect(outcome == .completed)
        try await eventually(.seconds(3), "the tone at the far end") { (listener.loudSpan()?.count ?? 0) >= 45 }
        try await Task.sleep(for: .milliseconds(300))
        // Loud 20 ms frames: the tone's second, whatever gaps a loaded machine put between them.
        let heard = Double(try #require(listener.loudSpan()).count) * 0.02
        #expect(heard > 0.85 && heard < 1.15, "the 1 s tone was heard for \(heard) s")
        let frames = listener.frames.value
        #expect(frames.allSatisfy { $0.bytes == 640 }, "16 kHz mono s16 20 ms frames are 640 bytes")
        let backwards = zip(frames, frames.dropFirst()).filter { $1.pts <= $0.pts }.map { "\($0.0.pts)→\($0.1.pts)" }
        #expect(backwards.isEmpty, "frame times increase: \(backwards.prefix(5)) of \(frames.count)")
        #expect(stereoListener.frames.value.allSatisfy { $0.bytes == 3840 }, "48 kHz stereo f32 10 ms frames are 3840 bytes")
        #expect((stereoListener.loudSpan()?.count ?? 0) >= 90)
        #expect(stream.droppedFrames == 0)
        stream.stop(); stereo.stop()
        await pair.close()
    }

    @Test func interruptStopsPlayingAtOnceAndEmptiesTheQueue() async throws {
        let pair = Self.pair()
        try await pair.start()
        try await waitFor(.connected, on: pair.offerer)
        let listener = Listener(try await pair.offerer.farEndAudio())
        try await eventually(.seconds(10), "far-end frames") { listener.frames.value.count > 10 }
        let long = try await pair.answerer.play(.clip(try Self.tone(seconds: 5)), label: "long")
        let queued = try await pair.answerer.play(.clip(try Self.tone(seconds: 5)), label: "queued")
        try await eventually(.seconds(3), "the tone at the far end") { (listener.loudSpan()?.count ?? 0) >= 25 }
        await pair.answerer.interruptPlayback()
        let interruptedAt = try #require(await pair.answerer.mediaPipeline?.runningTime).nanoseconds
        guard case .interrupted(let after) = await long.finished() else { Issue.record("not interrupted: \(String(describing: long.outcome))"); return }
        #expect(after > .milliseconds(400) && after < .seconds(3))
        #expect(queued.outcome == .interrupted(after: .zero))
        try await Task.sleep(for: .milliseconds(800))
        // Both ends run on this machine's monotonic clock with base times a few ms apart; the
        // tap's times are the offerer's, so allow for that and for the 200 ms jitter buffer.
        let span = try #require(listener.loudSpan())
        let offererNow = try #require(await pair.offerer.mediaPipeline?.runningTime).nanoseconds
        let answererNow = try #require(await pair.answerer.mediaPipeline?.runningTime).nanoseconds
        let stopAtOfferer = Int64(span.last) - (offererNow - answererNow) - interruptedAt
        #expect(stopAtOfferer < 400_000_000, "the tone stopped \(stopAtOfferer / 1_000_000) ms after the interrupt (jitter buffer included)")
        #expect(Double(span.count) * 0.02 < 3, "not the whole 5 s clip")
        await pair.close()
    }

    @Test func aSlowReaderLosesTheOldestFramesAndTheCallGoesOn() async throws {
        let pair = Self.pair()
        try await pair.start()
        try await waitFor(.connected, on: pair.offerer)
        let stream = try await pair.offerer.farEndAudio(capacity: 5)
        try await eventually(.seconds(10), "frames dropped for the slow reader") { stream.droppedFrames > 20 }
        var iterator = stream.makeAsyncIterator()
        var read = 0
        while read < 30, await iterator.next() != nil { read += 1 }
        #expect(read == 30, "frames keep coming after the drops")
        #expect(stream.producedFrames > stream.droppedFrames)
        await pair.close()
        let ended = try await value(of: Task { var rest = stream.makeAsyncIterator(); while await rest.next() != nil {}; return true },
                                    within: .seconds(5), "the stream ends with the call")
        #expect(ended)
    }

    @Test func playingIntoACallWithoutApplicationAudioIsAClearError() async throws {
        let pair = PeerPair(offerer: testMedia(videoEnabled: false), answerer: testMedia(videoEnabled: false))
        try await pair.start()
        let clip = try Self.tone(seconds: 0.1)
        await #expect(throws: AppMediaError.self) { try await pair.answerer.play(.clip(clip), label: "x") }
        await pair.close()
    }
}

/// Voice activity and barge-in between two real peers: the "caller" plays a tone as speech
/// while the "bot" plays a long prompt.
@Suite(.serialized) struct BargeInTests {
    @Test func theFarEndSpeakingStopsThePromptAndTheCallerHearsItStop() async throws {
        var caller = testMedia(videoEnabled: false, audio: .silence)
        caller.parameters.applicationAudio = true
        var bot = caller
        bot.parameters.applicationAudio = true
        let pair = PeerPair(offerer: caller, answerer: bot)
        try await pair.start()
        try await waitFor(.connected, on: pair.offerer)
        let atCaller = ApplicationAudioTests.Listener(try await pair.offerer.farEndAudio())
        let activity = try await pair.answerer.voiceActivity()
        let heard = Task { () -> [VoiceActivity] in
            var events: [VoiceActivity] = []
            for await event in activity {
                events.append(event)
                if case .stopped = event { break }
            }
            return events
        }
        try await pair.answerer.setBargeIn(.standard)
        try await eventually(.seconds(10), "far-end frames") { atCaller.frames.value.count > 10 }
        let prompt = try await pair.answerer.play(.clip(try ApplicationAudioTests.tone(seconds: 8)), label: "prompt")
        try await eventually(.seconds(3), "the prompt at the caller") { (atCaller.loudSpan()?.count ?? 0) >= 25 }
        let speech = try await pair.offerer.play(.clip(try ApplicationAudioTests.tone(seconds: 1, frequency: 300)), label: "speech")
        guard case .interrupted = await prompt.finished() else { Issue.record("the prompt was not interrupted: \(String(describing: prompt.outcome))"); return }
        _ = await speech.finished()
        let events = try await value(of: heard, within: .seconds(5), "speech start and stop")
        #expect(events.count == 2)
        let bargeIns = await pair.answerer.bargeIns
        let bargeIn = try #require(bargeIns.first)
        #expect(bargeIns.count == 1 && bargeIn.label == "prompt")
        #expect(bargeIn.reaction < .milliseconds(800), "the playout stopped \(bargeIn.reaction) after the speech began (at the bot)")
        // At the caller: from its own speech leaving to the bot's prompt no longer arriving.
        try await Task.sleep(for: .milliseconds(600))
        let spokeAt = try #require(speech.startedAt)
        let span = try #require(atCaller.loudSpan())
        let stoppedAfter = Double(Int64(span.last) - Int64(spokeAt)) / 1e6
        #expect(stoppedAfter < 1500, "the caller heard the prompt stop \(stoppedAfter) ms after starting to speak")
        await pair.close()
    }
}

/// Video the app draws: a counter pushed as pictures arrives at the far end decoded, in order,
/// at the pushed rate, and the encoder keeps its steady rate when the app is slow.
@Suite(.serialized) struct VideoPushTests {
    /// A grey picture whose level encodes `count` (16 + 7·count in luma, 0…29).
    static func counter(_ count: Int) throws -> VideoFrame {
        let width = 320, height = 240
        let luma = [UInt8](repeating: UInt8(16 + 7 * count), count: width * height)
        let chroma = [UInt8](repeating: 128, count: width * height / 2)
        return try VideoFrame.packed(format: .i420, width: width, height: height, data: luma + chroma)
    }

    @Test func pushedPicturesArriveInOrderAtThePushedRate() async throws {
        let app = testMedia(video: .single(.app(name: "app_video")))
        let pair = PeerPair(offerer: app, answerer: testMedia())
        let atAnswerer = RemoteMedia(pair.answerer)
        try await pair.start()
        try await waitFor(.connected, on: pair.offerer)
        let writer = try await pair.offerer.videoWriter(source: "app_video")
        // The far end's pictures, as counters read back from their grey level.
        let seen = Locked<[Int]>([])
        let reading = Task {
            var last: UInt64?
            while !Task.isCancelled {
                if let frame = atAnswerer.video.last, frame.pts != last {
                    last = frame.pts
                    let center = (frame.height / 2 * frame.width + frame.width / 2) * 4
                    let luma = 16 + Double(frame.data[center]) * 219 / 255
                    seen.withLock { $0.append(Int(((luma - 16) / 7).rounded())) }
                }
                try? await Task.sleep(for: .milliseconds(5)) // cancelled: the loop ends
            }
        }
        for count in 0..<30 {
            try writer.write(try Self.counter(count))
            try await Task.sleep(for: .milliseconds(100))
        }
        try await Task.sleep(for: .milliseconds(500))
        reading.cancel()
        let counters = seen.value.filter { (0..<30).contains($0) }
        let distinct = counters.reduce(into: [Int]()) { if $0.last != $1 { $0.append($1) } }
        #expect(distinct == distinct.sorted(), "in order: \(distinct)")
        #expect(distinct.count >= 25, "most of the 30 pictures (10 a second) were seen: \(distinct)")
        let counts = writer.counts
        #expect(counts.written == 30)
        // 3.5 s at the call's 30 fps, the app's 10 a second repeated in between.
        #expect(counts.sent >= 90 && counts.repeated >= 60, "\(counts)")
        writer.close()
        await pair.close()
    }
}
