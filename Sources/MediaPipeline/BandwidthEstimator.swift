/// The sender's estimate of the rate the path carries, and what the encoders should do about it.
///
/// GStreamer 1.22 has no congestion controller (webrtcsink's lives in Rust), so this is ours, in
/// the spirit of libwebrtc's loss-based controller with a delay guard:
/// - loss under 2 %: the path has room; the target grows 8 % a second, up to the maximum;
/// - loss over 10 %: the path is full; the target drops to what actually got through
///   (`sent rate × (1 − loss)`, a little under it) at once, so one report fixes a hard cap;
/// - in between: hold;
/// - round-trip time 150 ms above the smallest seen in the last 10 s: a queue is building in
///   front of a bottleneck before it drops anything (a token bucket); back off 15 %.
/// A pure state machine over `Report`s with their own time, so tests drive it with any clock.
public struct BandwidthEstimator: Sendable {
    public struct Settings: Sendable, Equatable {
        public var minKbps: Int
        public var maxKbps: Int
        public var startKbps: Int
        public var lowRateFloorKbps: Int

        public init(minKbps: Int, maxKbps: Int, startKbps: Int? = nil, lowRateFloorKbps: Int) {
            self.minKbps = max(1, min(minKbps, maxKbps))
            self.maxKbps = max(1, maxKbps)
            self.startKbps = min(self.maxKbps, max(self.minKbps, startKbps ?? maxKbps))
            self.lowRateFloorKbps = lowRateFloorKbps
        }
    }

    /// One reading of the outgoing video stream and the far end's latest receiver report.
    public struct Report: Sendable, Equatable {
        /// Seconds on a monotonic clock.
        public var time: Double
        public var bytesSent: UInt64
        /// The far end's loss over its last report interval, 0…1 (RTCP `fraction lost`).
        public var fractionLost: Double?
        /// Seconds.
        public var roundTripTime: Double?

        public init(time: Double, bytesSent: UInt64, fractionLost: Double?, roundTripTime: Double?) {
            self.time = time
            self.bytesSent = bytesSent
            self.fractionLost = fractionLost
            self.roundTripTime = roundTripTime
        }
    }

    /// What the sender should run at now.
    public struct Decision: Sendable, Equatable {
        /// The video encoder's bitrate, kbit/s.
        public var targetKbps: Int
        /// What the path was seen to carry, kbit/s (the measured send rate when nothing was lost).
        public var estimateKbps: Int
        /// Frames per second to cap the video at (nil: the call's own rate).
        public var maxFrameRate: Int?
        /// The share of FEC parity packets for video, 0…50 %.
        public var fecPercentage: Int
        /// What Opus should expect to lose, 0…100 % (its in-band FEC follows it).
        public var audioLossPercentage: Int
        /// Why, for events and logs: "probe", "loss", "delay", "hold".
        public var reason: String
    }

    public let settings: Settings
    private let fullFrameRate: Int
    private var target: Double
    private var last: Report?
    private var lastChange: Double?
    private var rttWindow: [(time: Double, rtt: Double)] = []
    public private(set) var decision: Decision

    public init(settings: Settings, frameRate: Int) {
        self.settings = settings
        fullFrameRate = max(1, frameRate)
        target = Double(settings.startKbps)
        decision = Decision(targetKbps: settings.startKbps, estimateKbps: settings.startKbps, maxFrameRate: nil,
                            fecPercentage: 0, audioLossPercentage: 0, reason: "start")
    }

    /// Folds in a report; returns the new decision when any of its settings changed.
    public mutating func update(_ report: Report) -> Decision? {
        defer { last = report }
        guard let previous = last, report.time > previous.time else { return nil }
        let interval = report.time - previous.time
        let sentKbps = report.bytesSent >= previous.bytesSent
            ? Double(report.bytesSent - previous.bytesSent) * 8 / 1000 / interval : 0
        let loss = min(1, max(0, report.fractionLost ?? 0))
        var reason = "hold"
        var estimate = Double(decision.estimateKbps)
        if loss > 0.10 {
            let delivered = sentKbps * (1 - loss) * 0.95
            target = min(target * (1 - 0.5 * loss), delivered > 0 ? delivered : target)
            estimate = sentKbps * (1 - loss)
            reason = "loss"
            lastChange = report.time
        } else if let rtt = report.roundTripTime, rtt > 0, isQueueing(rtt: rtt, at: report.time),
                  report.time - (lastChange ?? -.infinity) > max(0.5, rtt) {
            target *= 0.85
            estimate = min(estimate, sentKbps)
            reason = "delay"
            lastChange = report.time
        } else if loss < 0.02 {
            target *= pow108(interval)
            estimate = max(sentKbps, min(target, Double(settings.maxKbps)))
            reason = "probe"
        }
        if let rtt = report.roundTripTime, rtt > 0 { noteRTT(rtt, at: report.time) }
        target = min(Double(settings.maxKbps), max(Double(settings.minKbps), target))
        let targetKbps = Int(target.rounded())
        let next = Decision(targetKbps: targetKbps, estimateKbps: Int(estimate.rounded()),
                            maxFrameRate: targetKbps < settings.lowRateFloorKbps ? max(1, fullFrameRate / 2) : nil,
                            fecPercentage: loss < 0.01 ? 0 : min(50, Int((loss * 150).rounded())),
                            audioLossPercentage: min(100, Int((loss * 100).rounded())), reason: reason)
        // Small steps are not worth an encoder reconfiguration.
        let changed = abs(next.targetKbps - decision.targetKbps) * 20 >= max(1, decision.targetKbps)
            || next.maxFrameRate != decision.maxFrameRate || next.fecPercentage != decision.fecPercentage
            || next.audioLossPercentage != decision.audioLossPercentage
        guard changed else {
            decision.estimateKbps = next.estimateKbps
            return nil
        }
        decision = next
        return next
    }

    /// 8 % a second, compounded over the report interval.
    private func pow108(_ seconds: Double) -> Double {
        var factor = 1.0
        var left = min(seconds, 5)
        while left >= 1 { factor *= 1.08; left -= 1 }
        return factor * (1 + 0.08 * left)
    }

    private func isQueueing(rtt: Double, at time: Double) -> Bool {
        guard let floor = rttWindow.map(\.rtt).min() else { return false }
        return rtt > floor + 0.150
    }

    private mutating func noteRTT(_ rtt: Double, at time: Double) {
        rttWindow.append((time, rtt))
        rttWindow.removeAll { time - $0.time > 10 }
    }
}
