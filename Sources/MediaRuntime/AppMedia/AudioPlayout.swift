import Foundation
import GLibCore
import GStreamer
import MediaPipeline
import Synchronization

/// Plays application audio into a call through the send graph's application-audio appsrc (see
/// `MediaParameters.applicationAudio`): a queue of clips, frame streams and files, one at a time,
/// each paced in real time against the call pipeline's clock whatever its producer's speed, each
/// with a `Playback` handle that stops it at once.
///
/// Pacing: a frame is stamped `lead` ahead of the call's running time and pushed no earlier than
/// `lead` before it is due, so at most `lead` plus one frame is ever queued inside the graph
/// (what an interrupt cannot take back); a playback that fell late grows its lead (see `minimumLead`). A producer slower than real time leaves gaps the mixer
/// fills with the configured source alone; a faster one is waited for.
package final class AudioPlayout: Sendable {
    /// How far ahead of the call's clock frames are stamped and pushed: room for the pushing
    /// task to be scheduled late on a loaded machine (60 ms left gaps in speech at load 12).
    package static let lead: UInt64 = 100_000_000
    /// A frame due sooner than this is late: the timeline restarts `lead` ahead, and the lead
    /// of that playback grows by `leadStep` up to `maximumLead` (a machine too loaded to push in
    /// time gets fewer gaps, at the price of a slower interrupt).
    static let minimumLead: UInt64 = 20_000_000
    static let leadStep: UInt64 = 50_000_000
    package static let maximumLead: UInt64 = 400_000_000
    /// Playbacks waiting at most (a bot that queues more is stuck).
    package static let queueLimit = 64

    package enum Input: Sendable {
        case clip(AudioClip)
        /// Frames from the application, pulled as they are due: `produce` hands each frame to
        /// the closure it is given, which waits while the playout is ahead (back-pressure).
        case frames(@Sendable (_ each: (AudioFrame) async throws -> Void) async throws -> Void)
        case file(String)

        /// The frames of any sendable sequence.
        package static func sequence<S: AsyncSequence & Sendable>(_ frames: S) -> Input where S.Element == AudioFrame {
            .frames { each in for try await frame in frames { try await each(frame) } }
        }
    }

    private struct Entry: Sendable {
        let playback: Playback
        let input: Input
        let mode: PlayoutMode
        let lead: UInt64
    }

    private struct State {
        var queue: [Entry] = []
        var current: (playback: Playback, task: Task<Void, Never>)?
        var closed = false
        var sourceFormat: AudioFormat?
    }

    private let source: AppSource
    private let gate: Element?
    private let clock: Element
    private let playedAudio: PlayedAudioLevels?
    private let state = Mutex(State())

    /// `source` is the graph's application-audio appsrc, `gate` the volume on the configured
    /// source, `clock` the call pipeline (whose running time the frames are stamped with);
    /// `playedAudio` records the levels of what is played (the echo reference).
    package init(source: AppSource, gate: Element?, clock: Element, playedAudio: PlayedAudioLevels? = nil) {
        self.source = source
        self.gate = gate
        self.clock = clock
        self.playedAudio = playedAudio
    }

    /// Queues `input`; it plays after everything queued before it. `lead` (clamped to
    /// `lead`…`maximumLead`) is how far ahead it starts: a relay of audio that itself arrives
    /// in bursts (a loop playing back what it hears) starts at `maximumLead` to keep one delay.
    package func enqueue(_ input: Input, mode: PlayoutMode = .mix, label: String, lead: UInt64 = AudioPlayout.lead) throws(AppMediaError) -> Playback {
        let playback = Playback(label: label) { [weak self] playback in self?.stop(playback) }
        let entry = Entry(playback: playback, input: input, mode: mode, lead: min(max(lead, Self.lead), Self.maximumLead))
        let failure: AppMediaError? = state.withLock { state in
            if state.closed { return .notRunning("the call ended") }
            if state.queue.count >= Self.queueLimit { return .invalidFrame("\(Self.queueLimit) playbacks are already queued") }
            state.queue.append(entry)
            return nil
        }
        if let failure { throw failure }
        startNext()
        return playback
    }

    /// Stops what plays and empties the queue.
    package func interrupt() {
        let (queued, current) = state.withLock { state in
            defer { state.queue = [] }
            return (state.queue, state.current?.task)
        }
        for entry in queued { entry.playback.settle(.interrupted(after: .zero)) }
        current?.cancel()
    }

    /// The label of what plays now.
    package var currentLabel: String? { state.withLock { $0.current?.playback.label } }

    /// Whether something plays or waits to.
    package var isActive: Bool { state.withLock { $0.current != nil || !$0.queue.isEmpty } }

    /// Interrupts everything and refuses new playbacks (the call ended).
    package func close() {
        state.withLock { $0.closed = true }
        interrupt()
    }

    private func stop(_ playback: Playback) {
        let (wasQueued, task) = state.withLock { state -> (Bool, Task<Void, Never>?) in
            if let index = state.queue.firstIndex(where: { $0.playback === playback }) {
                state.queue.remove(at: index)
                return (true, nil)
            }
            return (false, state.current?.playback === playback ? state.current?.task : nil)
        }
        if wasQueued { playback.settle(.interrupted(after: .zero)) }
        task?.cancel()
    }

    private func startNext() {
        state.withLock { state in
            guard state.current == nil, !state.queue.isEmpty else { return }
            let entry = state.queue.removeFirst()
            let task = Task.detached { [self] in
                let outcome = await self.play(entry)
                entry.playback.settle(outcome)
                self.state.withLock { state in if state.current?.playback === entry.playback { state.current = nil } }
                self.startNext()
            }
            state.current = (entry.playback, task)
        }
    }

    /// The call pipeline's running time in nanoseconds.
    private func now() -> UInt64 { clock.runningTime.map { UInt64(max(0, $0.nanoseconds)) } ?? 0 }

    private func play(_ entry: Entry) async -> PlaybackOutcome {
        if entry.mode == .replace { setGateMuted(true) }
        defer { if entry.mode == .replace { setGateMuted(false) } }
        var pacer = Pacer(lead: entry.lead)
        do {
            switch entry.input {
            case .clip(let clip):
                for frame in clip.frames() { try await push(frame, pacer: &pacer, playback: entry.playback) }
            case .frames(let produce):
                try await produce { frame in try await push(frame, pacer: &pacer, playback: entry.playback) }
            case .file(let path):
                let file = try await AudioFileReader(path: path)
                defer { file.close() }
                for await frame in file.frames { try await push(frame, pacer: &pacer, playback: entry.playback) }
                if let failure = file.failure { return .failed(failure) }
            }
            try Task.checkCancellation()
            // Completed once the last frame is due at the mixer, not when it was handed over.
            if let end = pacer.next, end > now() { try await Task.sleep(for: .nanoseconds(Int64(end - now()))) }
            return Task.isCancelled ? .interrupted(after: .nanoseconds(Int64(pacer.played))) : .completed
        } catch let error as AppMediaError {
            return .failed(error.description)
        } catch {
            return .interrupted(after: .nanoseconds(Int64(pacer.played)))
        }
    }

    private struct Pacer {
        var next: UInt64?
        var played: UInt64 = 0
        var lead: UInt64
    }

    private func push(_ frame: AudioFrame, pacer: inout Pacer, playback: Playback) async throws {
        try Task.checkCancellation()
        let current = now()
        if let next = pacer.next, next < current + Self.minimumLead {
            pacer.lead = min(pacer.lead + Self.leadStep, Self.maximumLead)
            pacer.next = current + pacer.lead
        }
        let due = pacer.next ?? current + pacer.lead
        if due > current + pacer.lead { try await Task.sleep(for: .nanoseconds(Int64(due - current - pacer.lead))) }
        try setSourceFormat(frame.format)
        do {
            try source.push(frame.data, pts: due, duration: frame.duration)
        } catch {
            throw AppMediaError.media("pushing played audio: \(error)")
        }
        playedAudio?.record(AudioFrame(trusted: frame.format, pts: due, data: frame.data))
        playback.markStarted(at: due)
        pacer.next = due + frame.duration
        pacer.played += frame.duration
    }

    private func setSourceFormat(_ format: AudioFormat) throws(AppMediaError) {
        let changed = state.withLock { state -> Bool in
            defer { state.sourceFormat = format }
            return state.sourceFormat != format
        }
        guard changed else { return }
        do throws(GStreamerError) {
            try source.configure(caps: try Caps(format.caps))
        } catch {
            throw .media("setting the played audio's format \(format): \(error)")
        }
    }

    private func setGateMuted(_ muted: Bool) {
        // The gate is a volume element the graph made; setting its boolean cannot fail.
        try? gate?.set("mute", muted)
    }
}
