import Foundation
import Synchronization

/// Finds the bot's own audio coming back from the far end (a speakerphone, a caller without echo
/// cancellation) and predicts how loud that echo is at any moment, so the voice activity detector
/// can tell the far end's speech from the bot's prompt returning.
///
/// It works on 10 ms level envelopes on the call's timeline: the *reference* (what the bot
/// played, stamped when it is due at the send graph's mixer) and the *far end* (the decoded far-end
/// audio). Every 100 ms of far-end audio it cross-correlates the far end's last `window` of
/// envelope with the reference's at lags 0…`maximumLag` (Pearson correlation of the dB envelopes,
/// levels clamped to -70…0 dBFS), but only when the reference had energy in that span. A peak of
/// at least `echoCorrelation` is an echo at that delay; its return loss is the median of reference
/// minus far-end level over the reference's loud bins. A correlation below `noEchoCorrelation`
/// with at least `decisionReference` of loud reference is "no echo" (the hysteresis keeps a
/// correlation wobbling around one threshold from switching the verdict back and forth). An echo
/// verdict not confirmed in the last second predicts the echo at any lag (at its return loss).
///
/// Pure: it has no clock, the levels carry their times, so the same audio gives the same verdicts.
package struct EchoDelayTracker: Sendable {
    /// The envelope's step.
    package static let bin: UInt64 = 10_000_000
    /// Lags searched: 0…1000 ms.
    package static let maximumLag = 100
    /// The far-end span correlated: 2 s.
    static let window = 200
    /// Reference levels above this count as the bot playing.
    static let activeLevel = -50.0
    static let floorLevel = -70.0
    /// Loud reference bins needed in the correlated span before any verdict (0.5 s).
    static let minimumReference = 50
    /// Loud reference bins needed before a low correlation means "no echo" (1.2 s).
    static let decisionReference = 120
    static let echoCorrelation = 0.5
    /// Before any verdict, the echo is assumed this much below the loudest audio played: with the
    /// gate's 6 dB margin, far-end audio within 3 dB of the bot's own level counts as speech (a
    /// caller talking into the call's first prompt as loud as the bot), and an echo that comes back
    /// at least 3 dB down (a speakerphone's usually comes back much further down) does not.
    static let blindReturnLoss = 9.0
    static let noEchoCorrelation = 0.25
    /// Kept history: the window plus the largest lag, with room.
    static let capacity = 512

    package enum Verdict: Sendable, Equatable {
        /// Not enough of the bot's audio yet to say.
        case unknown
        /// The bot's audio does not come back.
        case noEcho
        /// It comes back `delay` ns later, `returnLoss` dB quieter, with that correlation.
        case echo(delay: UInt64, returnLoss: Double, correlation: Double)
    }

    package private(set) var verdict: Verdict = .unknown
    /// Lags whose correlation over the last half second alone was high (0.7) in an estimate of
    /// the last second, with the bin of that estimate: while a moving delay's new lag climbs
    /// past the old one over the whole window, the echo there is predicted too.
    private var candidates: [(lag: Int, bin: Int64)] = []
    /// The last bin an estimate confirmed the echo's delay.
    private var confirmedBin: Int64 = -1_000_000
    static let recentWindow = 50
    private var reference = LevelRing(capacity: capacity)
    private var farEnd = LevelRing(capacity: capacity)
    private var lastEstimateBin: Int64 = .min

    /// A tracker that starts from what an earlier one on the same call found.
    package init(verdict: Verdict = .unknown) { self.verdict = verdict }

    /// The bot's played audio: `level` dBFS from `pts` for `duration` ns.
    package mutating func addReference(level: Double, pts: UInt64, duration: UInt64) {
        reference.set(level: level, pts: pts, duration: duration)
    }

    /// The far end's audio; re-estimates every 100 ms of it.
    package mutating func addFarEnd(level: Double, pts: UInt64, duration: UInt64) {
        farEnd.set(level: level, pts: pts, duration: duration)
        let last = Int64((pts + duration) / Self.bin) - 1
        if last >= lastEstimateBin + 10 {
            lastEstimateBin = last
            estimate(endingAt: last)
        }
    }

    /// The echo expected in the far-end audio at `pts`, in dBFS, or nil when none is (the bot
    /// was quiet, or its audio does not come back). While the verdict is unknown it is the
    /// loudest reference of the last `maximumLag` less `blindReturnLoss`.
    package func predictedEchoLevel(at pts: UInt64) -> Double? {
        let bin = Int64(pts / Self.bin)
        switch verdict {
        case .noEcho:
            return nil
        case .unknown:
            return reference.loudest(from: bin - Int64(Self.maximumLag), through: bin).map { $0 - Self.blindReturnLoss }
        case .echo(_, let returnLoss, _) where bin - confirmedBin > Int64(Self.maximumLag):
            // The delay was not confirmed in the last second (a new prompt after a pause, in
            // which the loop's delay may have moved: 70 ms between two prompts was measured; the
            // far end talking over the bot): any lag, at the return loss found.
            return reference.loudest(from: bin - Int64(Self.maximumLag), through: bin).map { $0 - returnLoss }
        case .echo(let delay, let returnLoss, _):
            // 50 ms either side of the delay (the estimate's own step, the envelope's smear) and
            // of each candidate lag (a delay that moves while the prompt plays).
            let lags = [Int(delay / Self.bin)] + candidates.map(\.lag)
            let loudest = lags.compactMap { lag in reference.loudest(from: bin - Int64(lag) - 5, through: bin - Int64(lag) + 5) }.max()
            return loudest.map { $0 - returnLoss }
        }
    }

    private mutating func estimate(endingAt last: Int64) {
        let first = last - Int64(Self.window) + 1
        let loudReference = reference.count(from: first - Int64(Self.maximumLag), through: last) { $0 > Self.activeLevel }
        guard loudReference >= Self.minimumReference else { return }
        var far: [Double] = []
        far.reserveCapacity(Self.window)
        var present: [Bool] = []
        for bin in first...last {
            let level = farEnd.level(at: bin)
            present.append(level != nil)
            far.append(Self.clamped(level ?? Self.floorLevel))
        }
        // Only a window the far end's audio fills says anything (not one a new tracker just began).
        guard present.count(where: { $0 }) >= Self.window * 9 / 10 else { return }
        var best = (lag: 0, correlation: -1.0)
        let recent = far.count - Self.recentWindow
        candidates.removeAll { $0.bin < last - 100 }
        for lag in 0...Self.maximumLag {
            var xs: [Double] = [], ys: [Double] = []
            var recentStart = 0
            for index in far.indices where present[index] {
                if index < recent { recentStart += 1 }
                xs.append(far[index])
                ys.append(Self.clamped(reference.level(at: first + Int64(index) - Int64(lag)) ?? Self.floorLevel))
            }
            let correlation = Self.pearson(xs, ys)
            if correlation > best.correlation { best = (lag, correlation) }
            // The last half second alone: where a delay that just moved already scores.
            if Self.pearson(Array(xs[recentStart...]), Array(ys[recentStart...])) >= Self.echoCorrelation + 0.2,
               !candidates.contains(where: { $0.bin == last && abs($0.lag - lag) < 5 }) {
                candidates.append((lag, last))
            }
        }
        if best.correlation >= Self.echoCorrelation {
            var losses: [Double] = []
            for index in far.indices where present[index] {
                if let played = reference.level(at: first + Int64(index) - Int64(best.lag)), played > Self.activeLevel {
                    losses.append(Self.clamped(played) - far[index])
                }
            }
            guard !losses.isEmpty else { return }
            losses.sort()
            verdict = .echo(delay: UInt64(best.lag) * Self.bin, returnLoss: losses[losses.count / 2], correlation: best.correlation)
            confirmedBin = last
        } else if best.correlation < Self.noEchoCorrelation, loudReference >= Self.decisionReference {
            verdict = .noEcho
        }
    }

    private static func clamped(_ level: Double) -> Double {
        level.isFinite ? min(0, max(floorLevel, level)) : floorLevel
    }

    /// Pearson correlation; 0 when either side is flat (a silent far end correlates with nothing).
    static func pearson(_ xs: [Double], _ ys: [Double]) -> Double {
        guard xs.count >= 2 else { return 0 }
        let n = Double(xs.count)
        let meanX = xs.reduce(0, +) / n, meanY = ys.reduce(0, +) / n
        var covariance = 0.0, varianceX = 0.0, varianceY = 0.0
        for index in xs.indices {
            let dx = xs[index] - meanX, dy = ys[index] - meanY
            covariance += dx * dy
            varianceX += dx * dx
            varianceY += dy * dy
        }
        guard varianceX > 1e-9, varianceY > 1e-9 else { return 0 }
        return covariance / (varianceX * varianceY).squareRoot()
    }
}

/// Levels per 10 ms bin, the last `capacity` bins.
struct LevelRing: Sendable {
    private var bins: [Int64]
    private var levels: [Double]

    init(capacity: Int) {
        bins = Array(repeating: .min, count: capacity)
        levels = Array(repeating: -.infinity, count: capacity)
    }

    mutating func set(level: Double, pts: UInt64, duration: UInt64) {
        let first = Int64(pts / EchoDelayTracker.bin)
        let end = Int64((pts + max(duration, 1) + EchoDelayTracker.bin - 1) / EchoDelayTracker.bin)
        for bin in first..<max(end, first + 1) {
            let slot = Int(bin % Int64(bins.count))
            bins[slot] = bin
            levels[slot] = level
        }
    }

    func level(at bin: Int64) -> Double? {
        guard bin >= 0 else { return nil }
        let slot = Int(bin % Int64(bins.count))
        return bins[slot] == bin ? levels[slot] : nil
    }

    func loudest(from first: Int64, through last: Int64) -> Double? {
        var loudest: Double?
        for bin in first...last {
            if let level = level(at: bin), level > EchoDelayTracker.activeLevel { loudest = max(loudest ?? level, level) }
        }
        return loudest
    }

    func count(from first: Int64, through last: Int64, where matches: (Double) -> Bool) -> Int {
        (first...last).reduce(0) { count, bin in level(at: bin).map(matches) == true ? count + 1 : count }
    }
}

/// The bot's played audio as 10 ms levels on the call's timeline: the echo reference. The call's
/// playout writes it as it hands frames to the send graph; every voice activity detector of the
/// call reads what is new since its last read. Keeps the last `capacity` levels.
package final class PlayedAudioLevels: Sendable {
    package struct Level: Sendable, Equatable {
        package let pts: UInt64
        package let level: Double
    }
    private struct State {
        var levels: [Level] = []
        /// The sequence number of `levels[0]`.
        var first = 0
    }
    static let capacity = 512
    private let state = Mutex(State())
    private let path = Mutex(EchoDelayTracker.Verdict.unknown)

    /// What the call's echo trackers last found: a detector started later begins from it (the
    /// echo path belongs to the call), so only the call's first played second is judged blind.
    package var echoPath: EchoDelayTracker.Verdict {
        get { path.withLock { $0 } }
        set { path.withLock { $0 = newValue } }
    }

    package init() {}

    /// Records `frame` in 10 ms pieces.
    package func record(_ frame: AudioFrame) {
        let samples = frame.floatSamples
        let step = max(1, frame.format.sampleRate / 100 * frame.format.channels)
        var pieces: [Level] = []
        var offset = 0
        while offset < samples.count {
            let piece = samples[offset..<min(samples.count, offset + step)]
            let energy = piece.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(piece.count)
            let pts = frame.pts + UInt64(offset / frame.format.channels) * 1_000_000_000 / UInt64(frame.format.sampleRate)
            pieces.append(Level(pts: pts, level: energy > 0 ? 10 * log10(energy) : -.infinity))
            offset += step
        }
        state.withLock { state in
            state.levels.append(contentsOf: pieces)
            let excess = state.levels.count - Self.capacity
            if excess > 0 {
                state.levels.removeFirst(excess)
                state.first += excess
            }
        }
    }

    /// The position after the last level recorded so far.
    package var end: Int { state.withLock { $0.first + $0.levels.count } }

    /// The levels recorded after sequence number `position` (0 at first), and the position to
    /// read from next. A reader that fell more than `capacity` behind loses the oldest.
    package func levels(after position: Int) -> (levels: [Level], next: Int) {
        state.withLock { state in
            let start = max(0, position - state.first)
            return (start < state.levels.count ? Array(state.levels[start...]) : [], state.first + state.levels.count)
        }
    }
}
