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
// Usage: bench-voice [--turns N] [--out FILE.md]
import ECVSpeech
import Foundation
import GLibCore
import GStreamer
import MediaPipeline
import MediaRuntime
import WebRTC

struct Options {
    var turns = 10
    var out: String?
    init() {
        var arguments = CommandLine.arguments.dropFirst().makeIterator()
        while let argument = arguments.next() {
            switch argument {
            case "--turns": turns = max(1, min(200, Int(arguments.next() ?? "") ?? 10))
            case "--out": out = arguments.next()
            default:
                FileHandle.standardError.write(Data("usage: bench-voice [--turns N] [--out FILE.md]\n".utf8))
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
        var heardIterator = heard.makeAsyncIterator()
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
            let spoken = try await caller.play(.clip(question), label: "question")
            _ = await spoken.finished()
            let speechEnd = callerTime.ms((spoken.startedAt ?? 0)) + question.duration.milliseconds
            var stopAt: Double?, stoppedReported: Double?, transcriptAt: Double?
            while transcriptAt == nil, let event = await heardIterator.next() {
                switch event {
                case .activity(.stopped(let at, let reportedAt)):
                    stopAt = botTime.ms(at)
                    stoppedReported = (ContinuousClock.now - origin).milliseconds
                    _ = reportedAt
                case .transcript(let transcript) where transcript.isFinal:
                    transcriptAt = (ContinuousClock.now - origin).milliseconds
                default: break
                }
            }
            guard let stopAt, let stoppedReported, let transcriptAt else { break }
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
        listening.cancel()
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
        print(report)
        if let out = options.out { try report.write(toFile: out, atomically: true, encoding: .utf8) }
    }

    static func loadAverage() -> Double {
        var loads = [Double](repeating: 0, count: 3)
        return getloadavg(&loads, 3) > 0 ? loads[0] : .nan
    }
}
