import Synchronization

/// How played audio shares the call with the configured source (microphone, test tone, file).
public enum PlayoutMode: String, Sendable, Hashable {
    /// Heard together with the configured source.
    case mix
    /// The configured source is silenced while this plays.
    case replace
}

/// How a queued playback ended.
public enum PlaybackOutcome: Sendable, Equatable {
    /// Every frame was played.
    case completed
    /// `interrupt()` (or a barge-in, or the call's end) stopped it, at `after` into it.
    case interrupted(after: Duration)
    /// The source could not be read (a file that does not decode, a stream that threw).
    case failed(String)
}

/// One queued piece of audio going into a call: a handle to wait for it or to stop it at once.
public final class Playback: Sendable {
    private struct State {
        var outcome: PlaybackOutcome?
        var waiters: [CheckedContinuation<PlaybackOutcome, Never>] = []
        /// The call-timeline time its first frame was played at.
        var startedAt: UInt64?
    }
    private let state = Mutex(State())
    private let stopper: @Sendable (Playback) -> Void
    /// What is played (for logs and transcripts): the text spoken, a file's path, "clip", "stream".
    public let label: String

    package init(label: String, stop: @escaping @Sendable (Playback) -> Void) {
        self.label = label
        stopper = stop
    }

    /// Stops this playback at once (or drops it from the queue); a finished one is left as it is.
    public func interrupt() { stopper(self) }

    /// The outcome, nil while queued or playing.
    public var outcome: PlaybackOutcome? { state.withLock { $0.outcome } }
    /// When the first frame went out, on the call's timeline (nil before).
    public var startedAt: UInt64? { state.withLock { $0.startedAt } }

    /// Waits until it completed, was interrupted or failed.
    public func finished() async -> PlaybackOutcome {
        await withCheckedContinuation { continuation in
            let outcome = state.withLock { state -> PlaybackOutcome? in
                if let outcome = state.outcome { return outcome }
                state.waiters.append(continuation)
                return nil
            }
            if let outcome { continuation.resume(returning: outcome) }
        }
    }

    package func markStarted(at time: UInt64) { state.withLock { if $0.startedAt == nil { $0.startedAt = time } } }

    /// Settles the outcome once; later calls do nothing.
    package func settle(_ outcome: PlaybackOutcome) {
        let waiters = state.withLock { state -> [CheckedContinuation<PlaybackOutcome, Never>] in
            guard state.outcome == nil else { return [] }
            state.outcome = outcome
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume(returning: outcome) }
    }
}

/// One barge-in: the far end started speaking while the bot played audio, which was stopped.
public struct BargeIn: Sendable, Hashable {
    /// When the far end's speech started (call timeline, ns: the first loud frame).
    public var speechStartedAt: UInt64
    /// When the detector reported it (after `VoiceActivityOptions.minimumSpeech`).
    public var detectedAt: UInt64
    /// When the playout was stopped (call timeline).
    public var interruptedAt: UInt64
    /// The playback that was stopped.
    public var label: String

    public init(speechStartedAt: UInt64, detectedAt: UInt64, interruptedAt: UInt64, label: String) {
        self.speechStartedAt = speechStartedAt
        self.detectedAt = detectedAt
        self.interruptedAt = interruptedAt
        self.label = label
    }

    /// From the first loud frame to the playout's stop.
    public var reaction: Duration { .nanoseconds(Int64(interruptedAt) - Int64(speechStartedAt)) }
}
