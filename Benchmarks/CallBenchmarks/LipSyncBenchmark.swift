import BenchmarkSupport
import ECVRecording
import Foundation
import GLibCore
import GStreamer
import MediaPipeline
import MediaRuntime
import MediaTestSupport
import WebRTC

/// Lip sync of an ECVKit sender as a recording bot records it: a live flash/beep signal sent by a
/// real `PeerConnection` (processed and encoded as a camera and microphone's would be) to a
/// receive-only recording peer over loopback, which records without decoding.
enum LipSyncBenchmark: CallBenchmark {
    static let name = "lip-sync"
    static let method = """
        The signal (`FlashBeep`): 320×240 30 fps video, black with a white flash of 3 frames once a second, and 48 kHz mono \
        audio, silent but for a 1 kHz beep of 100 ms starting with each flash, pushed live into the sender's application \
        sources (`.app`, a camera and microphone) with timestamps from one schedule, then processed and encoded as the \
        SDK does. The receiver is a recording peer that sends nothing and records the call \
        to Matroska without re-encoding (passthrough, as `ecv agent --receive-only --record`). After 10 s the recording is \
        decoded: a flash is the first bright frame, a beep the first sample above a tenth of full scale after 100 ms below; \
        the offset is the beep's time minus the flash's on the file's timeline (positive: audio late), for every flash after \
        the first 2.5 s (before the first sender reports the streams are lined up by arrival). Loopback, both peers in this \
        process; calls one after another. Foreign senders (`--senders aiortc,chromium`) play the same signal from a clip \
        made with GStreamer (a Y4M and a WAV file for Chromium's fake camera and microphone, its audio processing off; one \
        Matroska file, VP8 and PCM, for aiortc's MediaPlayer) as the caller of a call through the reference service on \
        loopback, into an ECVKit agent bot's recording (passthrough, started once the bot is connected). LiveKit egress's \"good\" bounds: each call's mean within ±50 ms, std ≤ 10 ms, \
        every offset within ±100 ms, stable (every later offset within 10 ms of the call's mean) within 1 s of the first flash.
        """
    static let settledAfter = 2.5
    static let recordSeconds = 10

    static func run(options: Options, report: inout BenchmarkReport) async throws {
        let calls = try options.int("calls", default: options.has("smoke") ? 1 : 5, range: 1...100)
        let senders = try options.list("senders", allowed: ["ecvkit"] + LipSyncForeignSender.Kind.allCases.map(\.rawValue)) ?? ["ecvkit"]
        let python = options.values["python"] ?? ProcessInfo.processInfo.environment["ECV_INTEROP_PYTHON"] ?? ".build/interop-venv/bin/python"
        if senders != ["ecvkit"], !FileManager.default.isExecutableFile(atPath: python) {
            throw BenchmarkError.badInput("lip-sync: no interop venv at \(python) (`make test-deps`, --python or ECV_INTEROP_PYTHON)")
        }
        let timer = SectionTimer()
        let work = URL(fileURLWithPath: options.values["work"] ?? NSTemporaryDirectory())
        var figures: [LipSyncFigure] = []
        if senders.contains("ecvkit") {
            for (sender, processing) in [("ECVKit, audio processing on (echo cancellation, noise suppression, gain control)", true),
                                         ("ECVKit, no audio processing", false)] {
                var results: [Result<FlashBeep.Measurement, any Error>] = []
                for index in 0..<calls {
                    do { results.append(.success(try await call(processing: processing, work: work, index: index))) } catch { results.append(.failure(error)) }
                }
                figures.append(figure(sender: sender, results: results))
            }
        }
        for kind in LipSyncForeignSender.Kind.allCases where senders.contains(kind.rawValue) {
            let results = try await LipSyncForeignSender(kind: kind, python: python, work: work, recordSeconds: recordSeconds).run(calls: calls)
            figures.append(figure(sender: kind.row, results: results))
        }
        report.lipSync = LipSyncSection(method: method, figures: figures, load: timer.finish())
    }

    /// One row: every call's offsets, each call's mean, spread and when it settled.
    static func figure(sender: String, results: [Result<FlashBeep.Measurement, any Error>]) -> LipSyncFigure {
        var offsets: [Double] = [], means: [Double] = [], stds: [Double] = [], stableAfter: [Double] = [], failures: [String] = []
        for (index, result) in results.enumerated() {
            do {
                let measured = try result.get()
                guard !measured.offsetsMs.isEmpty else {
                    throw BenchmarkError.badInput("no flash with a beep near it in the recording (flashes at \(measured.flashes) s, beeps at \(measured.beeps) s)")
                }
                let mean = measured.offsetsMs.reduce(0, +) / Double(measured.offsetsMs.count)
                offsets += measured.offsetsMs
                means.append(mean)
                stds.append((measured.offsetsMs.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / Double(measured.offsetsMs.count)).squareRoot())
                // From the first flash on after which every offset stays within 10 ms of the call's mean.
                let paired = FlashBeep.pairs(flashes: measured.flashes, beeps: measured.beeps)
                let lastUnstable = paired.filter { abs($0.offsetMs - mean) > 10 }.map(\.flash).max()
                let stableFrom = paired.first { $0.flash > (lastUnstable ?? -1) }?.flash ?? Double(recordSeconds)
                stableAfter.append(stableFrom - (paired.first?.flash ?? 0))
                progress(String(format: "lip-sync: %@ call %d: mean %.1f ms over %d flashes; every flash %@", sender, index, mean,
                                measured.offsetsMs.count, paired.map { String(format: "%.2f s %.1f", $0.flash, $0.offsetMs) }.joined(separator: ", ")))
            } catch {
                failures.append("\(error)")
                progress("lip-sync: \(sender) call \(index) failed: \(error)")
            }
        }
        return LipSyncFigure(sender: sender, calls: results.count, offsetsMs: offsets, callMeansMs: means, worstCallStdMs: stds.max(),
                             worstStableAfterSeconds: stableAfter.max(), failures: failures)
    }

    static func call(processing: Bool, work: URL, index: Int) async throws -> FlashBeep.Measurement {
        let parameters = MediaParameters(videoCallEnabled: true, useSpeakerPhone: false, videoWidth: 320, videoHeight: 240, videoFps: 30,
                                         noAudioProcessing: !processing)
        let sender = MediaConfiguration(parameters: parameters, video: .single(.app(name: "lip_camera")), audio: .app(name: "lip_microphone"))
        let recorder = MediaConfiguration(parameters: MediaParameters(videoWidth: 320, videoHeight: 240, noAudioProcessing: true),
                                          receiveVideo: .passthrough(name: "caller_video"), sendsMedia: false)
        let signaling = LoopbackSignaling()
        let caller = PeerConnection(configuration: PeerConfiguration(media: sender), role: .offerer, sendSignaling: signaling.first.send)
        let bot = PeerConnection(configuration: PeerConfiguration(media: recorder), role: .answerer, sendSignaling: signaling.second.send)
        signaling.connectFirst(to: caller)
        signaling.connectSecond(to: bot)
        var feeding: Task<Void, Never>?
        let feedFailure = Locked<String?>(nil)
        // What re-negotiates or rebuilds a call, logged with its time: a rebuilt session takes the
        // recorder's taps with it until the new streams come.
        let started = ContinuousClock.now
        let watches = [("caller", caller.events()), ("bot", bot.events())].map { name, events in
            Task {
                for await event in events {
                    let text: String
                    switch event {
                    case .sentOffer, .receivedOffer, .sentAnswer, .receivedAnswer: text = String("\(event)".prefix { $0 != "(" })
                    case .rebuilt, .error, .stateChanged, .iceConnectionStateChanged, .connectionStateChanged, .negotiationNeeded, .remoteStream,
                         .mediaSilent, .farEndClosed: text = "\(event)"
                    default: continue
                    }
                    progress(String(format: "lip-sync: call %d %@ at %.3f s: %@", index, name, (ContinuousClock.now - started).seconds, String(text.prefix(200))))
                }
            }
        }
        defer {
            feeding?.cancel()
            for watch in watches { watch.cancel() }
            signaling.close()
        }
        let url = work.appendingPathComponent("lip-sync-\(getpid())-\(processing ? "dsp" : "plain")-\(index).mkv")
        do {
            try await bot.start()
            try await caller.start()
            guard let media = await caller.media, let camera = media.elements.elements["lip_camera"],
                  let microphone = media.elements.elements["lip_microphone"] else {
                throw BenchmarkError.failed("the sender's graph has no application sources")
            }
            let (video, audio) = (try AppSource(camera), try AppSource(microphone))
            // The signal runs past the recording; one that stopped early (a push refused) would
            // leave the file short, so it is checked once the recording has stopped.
            feeding = Task {
                do { try await FlashBeep.feed(video: video, audio: audio, for: .seconds(recordSeconds + 25)) } catch is CancellationError {
                    // Cancelled once the call was measured or failed.
                } catch {
                    feedFailure.withLock { $0 = "\(error)" }
                }
            }
            let deadline = ContinuousClock.now + .seconds(20)
            while await bot.peerState != .connected {
                guard ContinuousClock.now < deadline else { throw BenchmarkError.badInput("the call did not connect within 20 s") }
                try await Task.sleep(for: .milliseconds(20))
            }
            // The bot's pipeline leaving PLAYING stops what it receives (its sources are live).
            let busWatch = await bot.mediaPipeline?.observeMessages { message in
                switch message {
                case .stateChanged(_, _, _, _, fromPipeline: true), .error, .warning:
                    progress(String(format: "lip-sync: call %d bot pipeline at %.3f s: %@", index, (ContinuousClock.now - started).seconds, "\(message)"))
                default: break
                }
            }
            defer { busWatch?.cancel() }
            progress(String(format: "lip-sync: call %d recording starts at %.3f s", index, (ContinuousClock.now - started).seconds))
            let recording = try await bot.startRecording(to: url, options: RecordingOptions(replaceExisting: true))
            try await Task.sleep(for: .seconds(recordSeconds)) // media time to record
            let summary = try await recording.stop()
            progress("lip-sync: call \(index) recording stopped: \(summary.duration), tracks \(summary.tracks.map(\.rawValue).sorted()), "
                     + "dropped \(summary.droppedTracks), problems \(summary.problems)")
            if let failure = feedFailure.value { throw BenchmarkError.failed("the sender's signal stopped during the recording: \(failure)") }
        } catch {
            await caller.close()
            await bot.close()
            throw error
        }
        await caller.close()
        await bot.close()
        defer {
            // Measured below; a leftover file changes nothing.
            for leftover in [url.path, url.path + ".chapters.json", url.path + ".stats.ndjson"] { try? FileManager.default.removeItem(atPath: leftover) }
        }
        let info = try await RecordingInspector.inspect(url)
        describe(info, of: url, call: "\(processing ? "dsp" : "plain") call \(index)")
        return try await FlashBeep.measure(url, videoPads: info.videoTracks.map(\.pad), audioPads: info.audioTracks.map(\.pad),
                                           settledAfter: settledAfter)
    }

    /// Logs each track's first and last frame times (seconds on the file's timeline) and longest
    /// gap, and the markers track's first and last texts: a short recording shows whether its
    /// media began late or ended early, against the markers' timeline of the whole recording. With
    /// `ECV_LIP_SYNC_KEEP_SHORT` naming a directory, a file whose audio or video spans less than
    /// 8.5 of its 10 s is copied there for a closer look.
    static func describe(_ info: RecordedFileInfo, of url: URL, call: String) {
        let tracks = info.tracks.map { track in
            String(format: "%@ %@ frames %d key %d first %.3f last %.3f longest gap %.3f%@", track.pad, track.title ?? "-", track.frames,
                   track.keyFrames, track.firstTime ?? -1, track.lastTime ?? -1, track.longestGap,
                   track.texts.isEmpty ? "" : " texts \(track.texts.count) last \(track.texts.last.map { String(format: "%.3f %@", $0.time, $0.text) } ?? "")")
        }
        progress("lip-sync: \(call) file \(url.lastPathComponent): " + tracks.joined(separator: "; ")
                 + (info.readProblem.map { "; read problem: \($0)" } ?? ""))
        let media = info.tracks.filter { $0.isVideo || $0.isAudio }
        if media.contains(where: { ($0.lastTime ?? 0) - ($0.firstTime ?? 0) < Double(recordSeconds) - 1.5 }),
           let keep = ProcessInfo.processInfo.environment["ECV_LIP_SYNC_KEEP_SHORT"] {
            let copy = URL(fileURLWithPath: keep).appendingPathComponent(url.lastPathComponent)
            try? FileManager.default.removeItem(at: copy) // a file of an earlier run with the same name: replaced
            do { try FileManager.default.copyItem(at: url, to: copy); progress("lip-sync: short recording kept at \(copy.path)") }
            catch { progress("lip-sync: short recording not kept: \(error)") }
        }
    }
}
