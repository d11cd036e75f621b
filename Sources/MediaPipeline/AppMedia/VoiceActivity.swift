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

    public init(threshold: Double = 12, minimumLevelDBFS: Double = -50, minimumSpeech: Duration = .milliseconds(60),
                hangover: Duration = .milliseconds(400)) throws(AppMediaError) {
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

    public init(options: VoiceActivityOptions = .standard) { self.options = options }

    public var isSpeaking: Bool { speaking }

    /// Feeds one frame; returns the event it caused, if any.
    public mutating func process(_ frame: AudioFrame) -> VoiceActivity? {
        process(level: frame.levelDBFS, pts: frame.pts, duration: frame.duration)
    }

    public mutating func process(level: Double, pts: UInt64, duration: UInt64) -> VoiceActivity? {
        let end = pts + duration
        let loud = level >= options.minimumLevelDBFS && level >= noiseFloor + options.threshold
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

extension Duration {
    /// Whole nanoseconds.
    fileprivate var wholeNanoseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}
