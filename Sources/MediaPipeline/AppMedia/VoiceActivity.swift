/// The far end started or stopped speaking, as the voice activity detector heard it.
public enum VoiceActivity: Sendable, Equatable {
    /// Speech began at `at` (nanoseconds on the call's timeline: the first loud frame).
    case started(at: UInt64)
    /// Speech ended at `at` (the last loud frame's end), after the hangover of quiet confirmed it;
    /// `reportedAt` is when the detector said so (`at` plus the hangover).
    case stopped(at: UInt64, reportedAt: UInt64)
}

/// How the voice activity detector decides. An energy detector with an adaptive noise floor
/// (documented in docs/bots-that-talk.md): a frame is speech when its level is `threshold` dB
/// above the noise floor and above `minimumLevelDBFS`; speech starts after `minimumSpeech` of such
/// frames and stops after `hangover` without one.
public struct VoiceActivityOptions: Sendable, Hashable {
    /// dB above the tracked noise floor a frame must reach to count as speech. Lower is more
    /// sensitive. 6…30.
    public var threshold: Double
    /// Frames quieter than this are never speech (digital silence, comfort noise). -70…-10.
    public var minimumLevelDBFS: Double
    /// Loud audio needed before speech is reported (filters clicks). 10…1000 ms.
    public var minimumSpeech: Duration
    /// Quiet needed before the end of speech is reported (pauses between words). 50…3000 ms.
    public var hangover: Duration
    /// While the call plays application audio, audio no louder than the bot's own echo would be
    /// is not speech: a far end without echo cancellation (a speakerphone) sending the bot's
    /// prompt back does not start speech, and the far end speaking over it still does (see
    /// docs/bots-that-talk.md, "The bot's own echo"). On by default.
    public var ignoresOwnEcho: Bool

    public init(threshold: Double = 12, minimumLevelDBFS: Double = -50, minimumSpeech: Duration = .milliseconds(60),
                hangover: Duration = .milliseconds(400), ignoresOwnEcho: Bool = true) throws(AppMediaError) {
        guard (6...30).contains(threshold) else { throw .invalidFormat("VAD threshold \(threshold) dB; use 6…30") }
        guard (-70 ... -10).contains(minimumLevelDBFS) else { throw .invalidFormat("VAD minimum level \(minimumLevelDBFS) dBFS; use -70…-10") }
        guard minimumSpeech >= .milliseconds(10), minimumSpeech <= .milliseconds(1000) else {
            throw .invalidFormat("VAD minimum speech \(minimumSpeech); use 10…1000 ms")
        }
        guard hangover >= .milliseconds(50), hangover <= .milliseconds(3000) else {
            throw .invalidFormat("VAD hangover \(hangover); use 50…3000 ms")
        }
        self.threshold = threshold
        self.minimumLevelDBFS = minimumLevelDBFS
        self.minimumSpeech = minimumSpeech
        self.hangover = hangover
        self.ignoresOwnEcho = ignoresOwnEcho
    }

    public static let standard: VoiceActivityOptions = {
        do { return try VoiceActivityOptions() } catch { fatalError("the default VAD options are valid: \(error)") }
    }()
}

/// The detector itself: pure, one frame at a time, no clock of its own (times come from the
/// frames), so the same audio always gives the same events.
public struct VoiceActivityDetector: Sendable {
    public let options: VoiceActivityOptions
    /// The noise floor follows quiet frames quickly down and slowly up, in dBFS.
    private var noiseFloor: Double = -60
    private var speaking = false
    private var loudSince: UInt64?
    private var lastLoudEnd: UInt64 = 0
    private var echo: EchoGate?

    public init(options: VoiceActivityOptions = .standard) { self.options = options }

    /// A detector that, when `options.ignoresOwnEcho`, does not take the echo of `playedAudio`
    /// (the call's played audio) for speech.
    package init(options: VoiceActivityOptions, playedAudio: PlayedAudioLevels?) {
        self.options = options
        if options.ignoresOwnEcho, let playedAudio { echo = EchoGate(playedAudio: playedAudio) }
    }

    public var isSpeaking: Bool { speaking }

    /// What the echo tracker found (nil without one).
    package var echoVerdict: EchoDelayTracker.Verdict? { echo?.tracker.verdict }
    /// Frames loud enough for speech that were taken for the bot's echo.
    package var echoFrames: Int { echo?.suppressed ?? 0 }

    /// Feeds one frame; returns the event it caused, if any.
    public mutating func process(_ frame: AudioFrame) -> VoiceActivity? {
        process(level: frame.levelDBFS, pts: frame.pts, duration: frame.duration)
    }

    public mutating func process(level: Double, pts: UInt64, duration: UInt64) -> VoiceActivity? {
        let end = pts + duration
        let loud = level >= options.minimumLevelDBFS && level >= noiseFloor + options.threshold
        if echo?.isEcho(level: level, pts: pts, duration: duration, loud: loud) == true {
            // The bot's own prompt coming back: neither speech nor the noise floor.
            return quiet(end: end)
        }
        if !loud, level.isFinite {
            // Quiet frames pull the floor toward them: fast down, slow up.
            noiseFloor += (level < noiseFloor ? 0.3 : 0.02) * (level - noiseFloor)
        }
        if loud {
            let since = loudSince ?? pts
            loudSince = since
            lastLoudEnd = end
            if !speaking, end - since >= UInt64(options.minimumSpeech.wholeNanoseconds) {
                speaking = true
                return .started(at: since)
            }
            return nil
        }
        return quiet(end: end)
    }

    private mutating func quiet(end: UInt64) -> VoiceActivity? {
        if !speaking {
            // A gap in loudness shorter than a frame resets the start only once it lasts.
            if let since = loudSince, end - lastLoudEnd > UInt64(options.minimumSpeech.wholeNanoseconds) || lastLoudEnd < since { loudSince = nil }
            return nil
        }
        if end - lastLoudEnd >= UInt64(options.hangover.wholeNanoseconds) {
            speaking = false
            loudSince = nil
            return .stopped(at: lastLoudEnd, reportedAt: end)
        }
        return nil
    }
}

/// The detector's echo check: an `EchoDelayTracker` fed the call's played audio and the far end's.
struct EchoGate: Sendable {
    /// Louder than the predicted echo by this much is the far end itself (double talk passes).
    static let margin = 6.0
    let playedAudio: PlayedAudioLevels
    var tracker: EchoDelayTracker
    var position: Int
    var suppressed = 0

    /// Reads what is played from now on.
    init(playedAudio: PlayedAudioLevels) {
        self.playedAudio = playedAudio
        position = playedAudio.end
        tracker = EchoDelayTracker(verdict: playedAudio.echoPath)
    }

    /// Feeds the frame (and the reference played since the last one); whether a frame the
    /// detector found `loud` is no louder than the echo it expects.
    mutating func isEcho(level: Double, pts: UInt64, duration: UInt64, loud: Bool) -> Bool {
        let (played, next) = playedAudio.levels(after: position)
        position = next
        for item in played { tracker.addReference(level: item.level, pts: item.pts, duration: EchoDelayTracker.bin) }
        let before = tracker.verdict
        tracker.addFarEnd(level: level, pts: pts, duration: duration)
        if tracker.verdict != before { playedAudio.echoPath = tracker.verdict }
        guard loud, let echo = tracker.predictedEchoLevel(at: pts), level < echo + Self.margin else { return false }
        suppressed += 1
        return true
    }
}

extension Duration {
    /// Whole nanoseconds.
    fileprivate var wholeNanoseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}
