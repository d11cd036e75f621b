import GLibCore
import GStreamer
import MediaPipeline
import MediaRuntime
import Synchronization

/// What a peer connection holds for application media: the playout into the send graph (made
/// on first use, kept across rebuilds like the send graph) and the barge-in watch. One per peer.
package final class ApplicationMedia: Sendable {
    struct State {
        var playout: AudioPlayout?
        var bargeIn: Task<Void, Never>?
        var bargeIns: [BargeIn] = []
    }
    let state = Mutex(State())
    /// What the playout played, the echo reference of the call's voice activity detectors.
    package let playedAudio = PlayedAudioLevels()

    package init() {}
}

extension PeerConnection {
    /// The call's application-audio playout; the send graph must have been compiled with
    /// `MediaParameters.applicationAudio`.
    package func audioPlayout() throws(AppMediaError) -> AudioPlayout {
        if let playout = applicationMedia.state.withLock({ $0.playout }) { return playout }
        guard !isClosed, let pipeline = mediaPipeline, let media else { throw .notRunning("the peer connection has not started") }
        guard let node = media.graph.nodes(withRole: .applicationAudioSource).first, let element = media.elements.elements[node.id] else {
            throw .notEnabled("the call was set up without MediaParameters.applicationAudio, so it has no input for played audio")
        }
        let source: AppSource
        do throws(GStreamerError) { source = try AppSource(element) } catch { throw .media("\(error)") }
        let gate = media.graph.nodes(withRole: .applicationAudioGate).first.flatMap { media.elements.elements[$0.id] }
        let made = AudioPlayout(source: source, gate: gate, clock: pipeline, playedAudio: applicationMedia.playedAudio)
        let (playout, isNew) = applicationMedia.state.withLock { state in
            if let existing = state.playout { return (existing, false) }
            state.playout = made
            return (made, true)
        }
        if isNew {
            // The call's end stops what plays and refuses more.
            let events = events()
            Task { [weak playout] in
                for await _ in events {}
                playout?.close()
            }
        }
        return playout
    }

    /// Queues `input` into the outgoing audio (`lead`: see `AudioPlayout.enqueue`).
    package func play(_ input: AudioPlayout.Input, mode: PlayoutMode = .mix, label: String, lead: UInt64 = AudioPlayout.lead) throws(AppMediaError) -> Playback {
        try audioPlayout().enqueue(input, mode: mode, label: label, lead: lead)
    }

    /// Stops what plays and empties the queue (nothing when nothing was ever played).
    package func interruptPlayback() {
        applicationMedia.state.withLock { $0.playout }?.interrupt()
    }

    /// The far end's voice activity: start and stop events from a detector on its audio.
    package func voiceActivity(options: VoiceActivityOptions = .standard) async throws(AppMediaError) -> AsyncStream<VoiceActivity> {
        let audio = try await farEndAudio(format: Self.voiceActivityFormat, capacity: AudioFrameStream.capacityRange.upperBound)
        let (events, continuation) = AsyncStream.makeStream(of: VoiceActivity.self, bufferingPolicy: .bufferingNewest(64))
        let playedAudio = applicationMedia.playedAudio
        let task = Task {
            var detector = VoiceActivityDetector(options: options, playedAudio: playedAudio)
            for await frame in audio {
                if let event = detector.process(frame) { continuation.yield(event) }
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in
            task.cancel()
            audio.stop()
        }
        return events
    }

    /// The detector's input: 16 kHz mono in 10 ms frames (cheap, and fine enough for speech).
    static let voiceActivityFormat = AudioFormat(unchecked: 16000, 1, .s16, 10)

    /// Barge-in: while `options` is set, the far end starting to speak stops what the bot plays
    /// (and empties its queue). nil turns it off.
    package func setBargeIn(_ options: VoiceActivityOptions?) async throws(AppMediaError) {
        let old = applicationMedia.state.withLock { state in defer { state.bargeIn = nil }; return state.bargeIn }
        old?.cancel()
        guard let options else { return }
        let playout = try audioPlayout()
        let activity = try await voiceActivity(options: options)
        let media = applicationMedia
        let clock = mediaPipeline
        let task = Task {
            for await event in activity {
                guard case .started(let at) = event, playout.isActive else { continue }
                let label = playout.currentLabel ?? "audio"
                playout.interrupt()
                let now = clock?.runningTime.map { UInt64(max(0, $0.nanoseconds)) } ?? at
                let detected = at + UInt64(max(0, options.minimumSpeech.nanoseconds))
                media.state.withLock { state in
                    if state.bargeIns.count >= 1000 { state.bargeIns.removeFirst() }
                    state.bargeIns.append(BargeIn(speechStartedAt: at, detectedAt: detected, interruptedAt: now, label: label))
                }
            }
        }
        applicationMedia.state.withLock { $0.bargeIn = task }
    }

    /// The barge-ins so far (the last 1000).
    package var bargeIns: [BargeIn] { applicationMedia.state.withLock { $0.bargeIns } }
}

extension PeerConnection {
    /// Speaks `text` with `synthesizer` into the outgoing audio.
    package func say(_ text: String, with synthesizer: any SpeechSynthesizer, mode: PlayoutMode = .mix) async throws(AppMediaError) -> Playback {
        let text = try SpeechText.validated(text)
        let clip = try await synthesizer.synthesize(text)
        return try play(.clip(clip), mode: mode, label: text)
    }
}

extension Optional where Wrapped == PeerConnection {
    /// The peer connection of a call whose media runs, for the products' media facades.
    package func running() throws(AppMediaError) -> PeerConnection {
        guard let peer = self else { throw .notRunning("the call's media has not started") }
        return peer
    }
}
