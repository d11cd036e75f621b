// bench-voice: voice turn latency and CPU of a talking bot, over a real call on loopback.
//
// One caller and one bot (two PeerConnections in this process, audio only, application audio on).
// Each turn: the caller says a phrase (espeak-ng, played into the call); the bot listens
// (VAD + pocketsphinx with a phrase grammar), answers with a synthesized sentence, and the caller
// notes the first loud frame of the answer. The turn's latency, from the end of the caller's
// speech to the first bot audio heard at the caller, splits into:
//   VAD hangover   end of speech (the last loud frame at the bot) → the detector's stop
//   recognition    the detector's stop → the final transcript
//   synthesis      the transcript → the answer's clip ready
//   transport      the clip queued → its first loud frame at the caller (playout lead, Opus,
//                  loopback, jitter buffer, decode), and the caller → bot leg before the hangover
// The split between the first two is approximate (a frame's time is its packet's arrival, before
// the jitter buffer's wait; a soft last syllable counts as transport); their sum is not. Times are on one clock (both pipelines run on this machine's monotonic clock; their base
// times are read to put the call timelines on it). CPU: the process's user+system time over the
// turns, which includes the caller's side (its synthesis, its listening), so an upper bound per bot.
//
// Barge-in, after the turns (barge-in on, the bot's standard detector): the bot plays a long prompt,
// and once the caller hears it the caller speaks (its phrase, at a varying moment in the prompt).
//   reaction at the bot   the caller's speech's first loud frame at the bot → the playout stopped
//                         (BargeIn.reaction: minimum speech, the detector's frames, the interrupt)
//   heard at the caller   the caller starting to speak → the last loud frame of the prompt it hears
//                         (adds both legs' transport and what the playout had queued, its lead)
//
// The bot's own echo, last: the caller plays back everything it hears 6 dB down at a steady delay
// (a speakerphone without echo cancellation; its playout starts at the largest lead), the bot plays a 7 s prompt, and two fresh detectors listen, one with
// `ignoresOwnEcho` and one without, each run as if it were the call's first prompt (the echo path
// forgotten); per run their starts, the echo's level at the bot (p90 of its
// 10 ms levels during the prompt), the delays the echo tracker judged the prompt at (its drift) and the
// return loss it found.
//
// Usage: bench-voice [--turns N] [--barge-ins N] [--echo-runs N] [--out FILE.md]
import ECVSpeech
import Foundation
import GLibCore
import GStreamer
import MediaPipeline
import MediaRuntime
import WebRTC

struct Options {
    var turns = 10
    var bargeIns = 10
    var echoRuns = 3
    var out: String?
    init() {
        var arguments = CommandLine.arguments.dropFirst().makeIterator()
        while let argument = arguments.next() {
            switch argument {
            case "--turns": turns = max(1, min(200, Int(arguments.next() ?? "") ?? 10))
            case "--barge-ins": bargeIns = max(1, min(200, Int(arguments.next() ?? "") ?? 10))
            case "--echo-runs": echoRuns = max(1, min(50, Int(arguments.next() ?? "") ?? 3))
            case "--out": out = arguments.next()
            default:
                FileHandle.standardError.write(Data("usage: bench-voice [--turns N] [--barge-ins N] [--echo-runs N] [--out FILE.md]\n".utf8))
                exit(2)
            }
        }
    }
}

func cpuSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
}

func percentile(_ values: [Double], _ p: Double) -> Double {
    let sorted = values.sorted()
    guard !sorted.isEmpty else { return .nan }
    return sorted[min(sorted.count - 1, Int((Double(sorted.count - 1) * p).rounded()))]
}

/// Nanoseconds on a pipeline's timeline → milliseconds on the process's monotonic clock (ms since `origin`).
struct Timeline: Sendable {
    let offset: Double
    init(_ pipeline: Pipeline, origin: ContinuousClock.Instant) {
        let running = Double(pipeline.runningTime?.nanoseconds ?? 0) / 1e6
        offset = (ContinuousClock.now - origin).milliseconds - running
    }
    func ms(_ nanoseconds: UInt64) -> Double { Double(nanoseconds) / 1e6 + offset }
}

extension Duration { var milliseconds: Double { Double(components.seconds) * 1000 + Double(components.attoseconds) / 1e15 } }

@main
struct VoiceTurnBenchmark {
    static let phrases = ["transfer me to billing", "thank you for calling", "please hold", "goodbye", "hello"]

    static func main() async throws {
        let options = Options()
        try GStreamerRuntime.ensureInitialized()
        var parameters = MediaParameters(videoCallEnabled: false, noAudioProcessing: true)
        parameters.applicationAudio = true
        let media = MediaConfiguration(parameters: parameters, audio: .silence, receiveAudio: .discard)
        let signaling = LoopbackSignaling()
        let caller = PeerConnection(configuration: PeerConfiguration(media: media), role: .offerer, sendSignaling: signaling.first.send)
        let bot = PeerConnection(configuration: PeerConfiguration(media: media), role: .answerer, sendSignaling: signaling.second.send)
        signaling.connectFirst(to: caller)
        signaling.connectSecond(to: bot)
        try await bot.start()
        try await caller.start()
        let connectDeadline = ContinuousClock.now + .seconds(20)
        while await (caller.peerState, bot.peerState) != (.connected, .connected), ContinuousClock.now < connectDeadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        let origin = ContinuousClock.now
        guard let botPipeline = await bot.mediaPipeline, let callerPipeline = await caller.mediaPipeline else { fatalError("no pipelines") }
        let botTime = Timeline(botPipeline, origin: origin), callerTime = Timeline(callerPipeline, origin: origin)
        let voice = try ESpeakSynthesizer()
        let heard = try await bot.listen(with: try PocketSphinxTranscriber(vocabulary: .phrases(phrases)))
        // What the bot heard and when; a turn the recogniser misses ends the turns after 15 s
        // (a loaded machine once kept the bench waiting for one forever).
        let heardEvents = Locked<[(event: Heard, at: Double)]>([])
        let hearing = Task {
            for await event in heard {
                let at = (ContinuousClock.now - origin).milliseconds
                heardEvents.withLock { $0.append((event, at)) }
            }
        }
        let atCaller = try await caller.farEndAudio(format: .speech)
        let loud = Locked<[Double]>([])
        let listening = Task {
            for await frame in atCaller where frame.levelDBFS > -40 { loud.withLock { $0.append(callerTime.ms(frame.pts)) } }
        }
        let question = try await voice.synthesize("Transfer me to billing")
        let answer = "Please hold while I transfer you to billing"
        var rows: [(hangover: Double, recognition: Double, synthesis: Double, transport: Double, inbound: Double, total: Double)] = []
        let cpuStart = cpuSeconds(), wallStart = ContinuousClock.now
        for turn in 0..<options.turns {
            let seen = heardEvents.value.count
            let spoken = try await caller.play(.clip(question), label: "question")
            _ = await spoken.finished()
            let speechEnd = callerTime.ms((spoken.startedAt ?? 0)) + question.duration.milliseconds
            var stopAt: Double?, stoppedReported: Double?, transcriptAt: Double?
            let hearDeadline = ContinuousClock.now + .seconds(15)
            while transcriptAt == nil, ContinuousClock.now < hearDeadline {
                for (event, at) in heardEvents.value.dropFirst(seen) where transcriptAt == nil {
                    switch event {
                    case .activity(.stopped(let stoppedAt, _)):
                        stopAt = botTime.ms(stoppedAt)
                        stoppedReported = at
                    case .transcript(let transcript) where transcript.isFinal:
                        transcriptAt = at
                    default: break
                    }
                }
                if transcriptAt == nil { try await Task.sleep(for: .milliseconds(5)) }
            }
            guard let stopAt, let stoppedReported, let transcriptAt else {
                FileHandle.standardError.write(Data("turn \(turn + 1): the bot heard no final transcript within 15 s\n".utf8))
                break
            }
            let clip = try await voice.synthesize(answer)
            let synthesized = (ContinuousClock.now - origin).milliseconds
            let queued = (ContinuousClock.now - origin).milliseconds
            let before = loud.value.count
            let reply = try await bot.play(.clip(clip), label: "answer")
            let waitDeadline = ContinuousClock.now + .seconds(10)
            while loud.value.count == before, ContinuousClock.now < waitDeadline { try await Task.sleep(for: .milliseconds(5)) }
            guard let firstHeard = loud.value.dropFirst(before).first else { break }
            _ = await reply.finished()
            rows.append((hangover: stoppedReported - stopAt, recognition: transcriptAt - stoppedReported, synthesis: synthesized - transcriptAt,
                         transport: firstHeard - queued, inbound: stopAt - speechEnd, total: firstHeard - speechEnd))
            FileHandle.standardError.write(Data(String(format: "turn %d: total %.0f ms\n", turn + 1, firstHeard - speechEnd).utf8))
            try await Task.sleep(for: .milliseconds(700)) // the caller hears the end of the answer before the next turn
        }
        let cpu = cpuSeconds() - cpuStart, wall = (ContinuousClock.now - wallStart).milliseconds / 1000
        let interruptions = try await bargeIns(options.bargeIns, bot: bot, caller: caller, question: question, voice: voice,
                                               loud: loud, callerTime: callerTime, origin: origin)
        let echoes = try await ownEcho(options.echoRuns, bot: bot, caller: caller, voice: voice)
        listening.cancel()
        hearing.cancel()
        atCaller.stop()
        await caller.close()
        await bot.close()
        signaling.close()

        func cell(_ values: [Double]) -> String { String(format: "%.0f / %.0f", percentile(values, 0.5), percentile(values, 0.95)) }
        let cores = Double(ProcessInfo.processInfo.activeProcessorCount)
        let share = cpu / wall
        var report = "# Voice turn latency (bench-voice)\n\n"
        report += "\(rows.count) turns, \(Date()), \(Int(cores)) cores; load average \(String(format: "%.2f", loadAverage())). "
        report += "Caller phrase \"Transfer me to billing\" (espeak-ng), bot answer \"\(answer)\"; pocketsphinx phrase grammar, VAD hangover 400 ms.\n\n"
        report += "| part (ms) | p50 / p95 |\n| --- | ---: |\n"
        report += "| caller → bot (end of speech at the caller → its last loud frame at the bot) | \(cell(rows.map(\.inbound))) |\n"
        report += "| VAD hangover (last loud frame → stop reported) | \(cell(rows.map(\.hangover))) |\n"
        report += "| recognition (stop → final transcript) | \(cell(rows.map(\.recognition))) |\n"
        report += "| synthesis (transcript → answer clip) | \(cell(rows.map(\.synthesis))) |\n"
        report += "| transport (answer queued → first loud frame at the caller) | \(cell(rows.map(\.transport))) |\n"
        report += "| **voice turn** (end of the caller's speech → first bot audio at the caller) | \(cell(rows.map(\.total))) |\n\n"
        report += String(format: "CPU over the turns: %.1f %% of one core for the bot and its caller together (an upper bound per talking bot); ", share * 100)
        report += String(format: "by that bound about %.0f talking bots with recognition on fit on %d cores.\n", cores / max(share, 0.001), Int(cores))
        func spread(_ values: [Double]) -> String {
            String(format: "%.0f / %.0f / %.0f", percentile(values, 0.5), percentile(values, 0.95), values.max() ?? .nan)
        }
        report += "\n## Barge-in\n\n\(interruptions.count) of \(options.bargeIns) runs interrupted the prompt; "
        report += "the caller speaks (\"Transfer me to billing\") 0.5-2 s into the bot's prompt, barge-in with the standard detector "
        report += "(threshold 12 dB, minimum speech 60 ms).\n\n"
        report += "| barge-in (ms) | p50 / p95 / max |\n| --- | ---: |\n"
        report += "| reaction at the bot (the caller's first loud frame at the bot → playout stopped) | \(spread(interruptions.map(\.reaction))) |\n"
        report += "| **heard at the caller** (the caller starts speaking → the last loud frame of the prompt it hears) | \(spread(interruptions.map(\.heard))) |\n"
        report += "\n## The bot's own echo\n\n\(echoes.count) runs; the caller plays back what it hears 6 dB down (no echo cancellation), "
        report += "the bot plays a 7 s prompt; detector starts during the prompt and its echo (the standard detector with and without "
        report += "`ignoresOwnEcho`); the echo's level at the bot is the p90 of its 10 ms levels while the prompt plays (the check "
        report += "takes nothing off the audio: it decides what is speech).\n\n"
        report += "| run | starts without / with | echo p90 (dBFS) | prompt p90 (dBFS) | delay found over the prompt (ms) | return loss (dB) |\n| --- | ---: | ---: | ---: | ---: | ---: |\n"
        for (index, echo) in echoes.enumerated() {
            report += "| \(index + 1) | \(echo.startsWithout) / \(echo.startsWith) | " + String(format: "%.1f | %.1f | ", echo.echoLevel, echo.promptLevel)
            report += "\(echo.delays) | " + String(format: "%.1f |\n", echo.returnLoss)
        }
        print(report)
        if let out = options.out { try report.write(toFile: out, atomically: true, encoding: .utf8) }
    }

    /// `runs` barge-ins: the bot's prompt, the caller's phrase into it, each one's reaction at the
    /// bot and the moment the caller stops hearing the prompt.
    static func bargeIns(_ runs: Int, bot: PeerConnection, caller: PeerConnection, question: AudioClip, voice: ESpeakSynthesizer,
                         loud: Locked<[Double]>, callerTime: Timeline, origin: ContinuousClock.Instant) async throws -> [(reaction: Double, heard: Double)] {
        let prompt = try await voice.synthesize("Welcome to the billing line. Your call is important to us. "
                                                + "Please stay on the line while we find the next free agent for you.")
        try await bot.setBargeIn(.standard)
        var results: [(reaction: Double, heard: Double)] = []
        for run in 0..<runs {
            let before = loud.value.count
            let playing = try await bot.play(.clip(prompt), label: "prompt")
            let deadline = ContinuousClock.now + .seconds(10)
            while loud.value.count == before, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
            // Into the prompt at a different moment each run (0.5 to 2 s after the caller first heard it).
            try await Task.sleep(for: .milliseconds(500 + (run * 370) % 1500))
            let known = await bot.bargeIns.count
            let speech = try await caller.play(.clip(question), label: "barge-in")
            let outcome = await playing.finished()
            _ = await speech.finished()
            try await Task.sleep(for: .milliseconds(800)) // the prompt's last frames still on their way to the caller
            guard case .interrupted = outcome, let bargeIn = await bot.bargeIns.dropFirst(known).first, let spokeAt = speech.startedAt else {
                FileHandle.standardError.write(Data("barge-in \(run + 1): the prompt was not interrupted (\(outcome))\n".utf8))
                continue
            }
            let spoke = callerTime.ms(spokeAt)
            guard let lastHeard = loud.value.dropFirst(before).last(where: { $0 < spoke + 5000 }) else { continue }
            results.append((reaction: bargeIn.reaction.milliseconds, heard: lastHeard - spoke))
            FileHandle.standardError.write(Data(String(format: "barge-in %d: reaction %.0f ms, heard stopping %.0f ms after speaking\n",
                                                       run + 1, bargeIn.reaction.milliseconds, lastHeard - spoke).utf8))
            try await Task.sleep(for: .milliseconds(500))
        }
        try await bot.setBargeIn(nil)
        return results
    }

    /// `runs` prompts into a caller that echoes them; see the header.
    static func ownEcho(_ runs: Int, bot: PeerConnection, caller: PeerConnection, voice: ESpeakSynthesizer) async throws
        -> [(startsWithout: Int, startsWith: Int, echoLevel: Double, promptLevel: Double, delays: String, returnLoss: Double)] {
        let prompt = try await voice.synthesize("Welcome to the billing line. Please hold while I look up your account "
                                                + "and the last payment we received from you, and the date it arrived.")
        let heard = try await caller.farEndAudio(format: .speech)
        let loop = try await caller.play(.frames { each in
            for await frame in heard {
                let quieter = frame.int16Samples.map { $0 / 2 }
                try await each(AudioFrame(trusted: frame.format, pts: frame.pts, data: try AudioClip(samples: quieter).data))
            }
        }, mode: .replace, label: "echo", lead: AudioPlayout.maximumLead)
        var results: [(startsWithout: Int, startsWith: Int, echoLevel: Double, promptLevel: Double, delays: String, returnLoss: Double)] = []
        let promptLevel = percentile(prompt.frames().map(\.levelDBFS), 0.9)
        let promptLength = UInt64(prompt.duration.milliseconds * 1e6)
        let noCheck = try VoiceActivityOptions(ignoresOwnEcho: false)
        for run in 0..<runs {
            let audio = try await bot.farEndAudio(format: AudioFormat(unchecked: 16000, 1, .s16, 10), capacity: 1000)
            let played = await bot.applicationMedia.playedAudio
            played.echoPath = .unknown   // each run judged as a call's first prompt, blind at first
            let playing = try await bot.play(.clip(prompt), label: "prompt")
            // Both detectors hear the prompt and its echo's tail (1.2 s) live, as a bot's would.
            let measuring = Task { () -> (startsWith: Int, startsWithout: Int, echoLevels: [Double], verdict: EchoDelayTracker.Verdict?, delays: [UInt64]) in
                var with = VoiceActivityDetector(options: .standard, playedAudio: played)
                var without = VoiceActivityDetector(options: noCheck)
                var startsWith = 0, startsWithout = 0
                var echoLevels: [Double] = []
                var delays: [UInt64] = []   // the delay each frame was judged at: its drift over the prompt
                for await frame in audio {
                    guard let start = playing.startedAt, frame.pts >= start else { continue }
                    if case .started? = with.process(frame) { startsWith += 1 }
                    if case .started? = without.process(frame) { startsWithout += 1 }
                    if case .echo(let delay, _, _)? = with.echoVerdict { delays.append(delay) }
                    if frame.pts < start + promptLength { echoLevels.append(frame.levelDBFS) }
                    if frame.pts >= start + promptLength + 1_200_000_000 { break }
                }
                return (startsWith, startsWithout, echoLevels, with.echoVerdict, delays)
            }
            _ = await playing.finished()
            let measured = await measuring.value
            audio.stop()
            var delay = "none", returnLoss = Double.nan
            if case .echo(_, let loss, _)? = measured.verdict, let low = measured.delays.min(), let high = measured.delays.max() {
                delay = low == high ? "\(low / 1_000_000)" : "\(low / 1_000_000)-\(high / 1_000_000)"
                returnLoss = loss
            }
            results.append((measured.startsWithout, measured.startsWith, percentile(measured.echoLevels, 0.9), promptLevel, delay, returnLoss))
            FileHandle.standardError.write(Data("echo run \(run + 1): starts \(measured.startsWithout) without, \(measured.startsWith) with; delay \(delay) ms\n".utf8))
            try await Task.sleep(for: .milliseconds(500))
        }
        loop.interrupt()
        heard.stop()
        return results
    }

    static func loadAverage() -> Double {
        var loads = [Double](repeating: 0, count: 3)
        return getloadavg(&loads, 3) > 0 ? loads[0] : .nan
    }
}
