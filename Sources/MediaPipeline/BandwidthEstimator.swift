/// The sender's estimate of the rate the path carries, and what the encoders should do about it.
///
/// GStreamer 1.22 has no congestion controller (webrtcsink's lives in Rust), so this is ours, in
/// the spirit of libwebrtc's loss-based controller with a delay guard:
/// - it starts low (`defaultStartKbps`, libwebrtc's start rate) and probes up, as libwebrtc
///   does: a sender that starts at the maximum and cuts on loss overflows a narrow path at
///   once (a 500 kbit/s cap with a 1.5 Mbit/s maximum froze the far end's picture 1.75 s);
/// - loss under 2 %: the path has room; the target grows 8 % a second, up to the maximum, but
///   only 1 % a second within 15 % of the rate where the path last overflowed (for 15 s after),
///   so it does not run into the same wall again and again;
/// - loss over 10 %: the path is full; the target drops to what actually got through
///   (`sent rate × (1 − loss)`, or the far end's arrival rate by transport-wide feedback; a
///   little under it) at once, so one report fixes a hard cap; the loss window then starts
///   again, and while the encoder comes down the target stays near what arrives;
/// - in between: hold;
/// - round-trip time `queueingMargin` above the smallest seen in the last 10 s: a queue is
///   building in front of a bottleneck before it drops anything (a token bucket); back off 15 %,
///   and the rate sent then is a wall the probe creeps toward, as after an overflow.
/// - transport-wide feedback packet by packet (`update(feedback:at:)`, each message as it comes,
///   30 a second from GStreamer, 10–20 from libwebrtc): the one-way delay over its floor of the
///   last 10 s is the queue in front of the bottleneck, the smallest of the last 150 ms its
///   standing part (a frame's own burst drains within that). A standing queue over
///   `queueHoldThreshold` holds the probe; over `queueCutThreshold` it is cut 15 % (the rate is a
///   wall, as after an overflow), again only while the queue has not started to drain, and no lower
///   than `queueCutFloor` of where that queue's first cut began. A half-second
///   receiver report sees a 100 ms queue only once it is full; this sees it fill.
/// A pure state machine over `Report`s with their own time, so tests drive it with any clock.
public struct BandwidthEstimator: Sendable {
    public struct Settings: Sendable, Equatable {
        public var minKbps: Int
        public var maxKbps: Int
        public var startKbps: Int
        public var lowRateFloorKbps: Int

        /// `startKbps` nil: `BandwidthEstimator.defaultStartKbps`; always within min…max.
        public init(minKbps: Int, maxKbps: Int, startKbps: Int? = nil, lowRateFloorKbps: Int) {
            self.minKbps = max(1, min(minKbps, maxKbps))
            self.maxKbps = max(1, maxKbps)
            self.startKbps = min(self.maxKbps, max(self.minKbps, startKbps ?? BandwidthEstimator.defaultStartKbps))
            self.lowRateFloorKbps = lowRateFloorKbps
        }
    }

    /// One reading of what we sent and of the far end's latest receiver reports.
    public struct Report: Sendable, Equatable {
        /// Seconds on a monotonic clock.
        public var time: Double
        /// Everything sent on the transport so far.
        public var bytesSent: UInt64
        /// Per stream (by SSRC): packets sent so far, the far end's count of them lost (cumulative
        /// RTCP `packets lost`; GStreamer 1.22's `fraction-lost` reads 0) and its resend requests.
        public var reported: [UInt: ReportedStream]
        /// Seconds.
        public var roundTripTime: Double?
        /// From transport-wide congestion feedback, when new feedback came since the last report:
        /// packets it covers and how many of them did not arrive. They count every packet that
        /// carries the sequence number, so once `minimumSample` of them are in the window they win
        /// over the receiver reports.
        public var transportPackets: TransportPackets?

        public init(time: Double, bytesSent: UInt64, reported: [UInt: ReportedStream], roundTripTime: Double?,
                    transportPackets: TransportPackets? = nil) {
            self.time = time
            self.bytesSent = bytesSent
            self.reported = reported
            self.roundTripTime = roundTripTime
            self.transportPackets = transportPackets
        }
    }

    /// What one transport-wide feedback reading covers.
    public struct TransportPackets: Sendable, Equatable {
        public var sent: Int
        public var lost: Int
        /// The rates they left at and arrived at, kbit/s (their sizes over the span of their send
        /// and arrival times), when the feedback gives them.
        public var sentKbps: Double?
        public var receivedKbps: Double?

        public init(sent: Int, lost: Int, sentKbps: Double? = nil, receivedKbps: Double? = nil) {
            self.sent = sent
            self.lost = lost
            self.sentKbps = sentKbps
            self.receivedKbps = receivedKbps
        }

        /// What arrived, when these packets are most of what we send: behind a full bottleneck
        /// they arrive at its rate. (Feedback that covers audio alone, a tenth of it, says
        /// nothing about the path's rate.)
        func arrivalKbps(whenWeSend ourKbps: Double) -> Double? {
            guard let sentKbps, let receivedKbps, receivedKbps > 0, sentKbps >= ourKbps * 0.5 else { return nil }
            return receivedKbps
        }
    }

    public struct ReportedStream: Sendable, Equatable {
        public var packetsSent: UInt64
        /// The far end's receiver-report count, when it reported on this stream.
        public var packetsLost: Int?
        /// Resend requests the far end sent for this stream: each names a packet that did not
        /// arrive, so they measure loss where webrtcbin lost the receiver report.
        public var nacks: UInt64

        public init(packetsSent: UInt64, packetsLost: Int?, nacks: UInt64 = 0) {
            self.packetsSent = packetsSent
            self.packetsLost = packetsLost
            self.nacks = nacks
        }
    }

    /// Where a call's rate starts, kbit/s, audio included: libwebrtc's default start bitrate
    /// (`kDefaultStartBitrateBps`, 300 kbit/s). A path narrower than that is found by the first
    /// loss report; a wider one by the probe (8 % a second).
    public static let defaultStartKbps = 300

    /// How far over the smallest recent round trip counts as a queue building: 50 ms, plus a
    /// quarter of that floor on long paths (their round trips wobble more), at most 150 ms. A
    /// token bucket's queue (the lab's `tbf` holds 100 ms) must read as one before it overflows.
    static func queueingMargin(floor: Double) -> Double { min(0.150, 0.030 + floor / 4) }

    /// Loss is measured over at least this long: receiver reports come every 0.1–1 s, so a
    /// shorter window often holds none and reads a loss of zero.
    static let lossWindow = 1.0
    /// Fewer transport-wide packets than this in the window say too little. (rtpsession's
    /// `twcc-stats` describe the packets of its latest feedback only, a handful each.)
    static let minimumSample = 6

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
        /// Why, for events and logs: "probe", "loss", "delay" (round trip), "queue" (transport-wide
        /// feedback's one-way delay), "hold".
        public var reason: String
    }

    public let settings: Settings
    private let fullFrameRate: Int
    private var target: Double
    private var last: Report?
    private var history: [Report] = []
    private var lastChange: Double?
    private var rttWindow: [(time: Double, rtt: Double)] = []
    /// Where and when the path last overflowed (kbit/s that got through, seconds).
    private var congestion: (kbps: Double, time: Double)?
    static let congestionMemory = 15.0
    public private(set) var decision: Decision
    /// The send rate of the last report interval, kbit/s (what the queue signal's decisions know of it).
    private var lastSentKbps = 0.0
    private var lastLoss = 0.0
    /// Transport-wide feedback: per message, its smallest one-way delay (by its newest send time),
    /// for the floor of the last `delayFloorWindow`; and every packet's delay of the last 0.3 s.
    private var delayMinima: [(sent: Double, delay: Double)] = []
    private var recentDelays: [(sent: Double, delay: Double)] = []
    /// The probe holds until then: the standing queue was over `queueHoldThreshold`.
    private var probeHeldUntil = -Double.infinity
    /// The last cut for a standing queue: when, and the queue it saw.
    private var lastQueueCut: (time: Double, queue: Double)?
    /// The target when the current queue episode's first cut came.
    private var queueEpisodeStart = 0.0
    /// The standing queue of the latest feedback, seconds (nil before feedback with delays came).
    public private(set) var standingQueue: Double?

    /// A standing queue this long holds the probe (a path's jitter stays under it).
    public static let queueHoldThreshold = 0.010
    /// A standing queue this long is cut: a quarter of the lab's 100 ms token-bucket queue, soon enough
    /// that a key frame on top of it still fits.
    public static let queueCutThreshold = 0.025
    /// A queue this long is near the lab's 100 ms: cut again sooner.
    static let queueNearFull = 0.060
    /// A queue episode's cuts go no lower than this share of the target it started at.
    static let queueCutFloor = 0.7
    /// The standing queue is the smallest delay of the packets sent within this long.
    static let standingWindow = 0.15
    static let delayFloorWindow = 10.0

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
        guard let previous = last, report.time > previous.time else {
            history = [report]
            return nil
        }
        history.append(report)
        // Keep the newest reading at least `lossWindow` old as the window's start.
        while history.count > 2, report.time - history[1].time >= Self.lossWindow { history.removeFirst() }
        let interval = report.time - previous.time
        let sentKbps = report.bytesSent >= previous.bytesSent
            ? Double(report.bytesSent - previous.bytesSent) * 8 / 1000 / interval : 0
        let loss = Self.transportLoss(in: history) ?? Self.loss(from: history.first ?? previous, to: report)
        var reason = "hold"
        var estimate = Double(decision.estimateKbps)
        if loss > 0.10 {
            // What got through: the rate the far end saw our packets arrive at, from
            // transport-wide feedback; else our half-second's send rate less the loss. Behind a
            // full bottleneck the first is the path's rate at once, where the window's loss first
            // reads the overflow diluted, then still holds it after a cut.
            let farEnd = report.transportPackets?.arrivalKbps(whenWeSend: sentKbps)
            let delivered = farEnd ?? sentKbps * (1 - loss)
            var next = min(target * (1 - 0.5 * loss), delivered > 0 ? delivered * 0.95 : target)
            // Never far under what arrived: the encoder takes a second or so to come down to a
            // cut, and the loss it causes meanwhile cut again and again (to 140–280 kbit/s
            // under a 500 kbit/s cap).
            if let farEnd { next = max(next, min(target, farEnd * 0.85)) }
            target = next
            estimate = delivered
            // The wall is the lowest rate that overflowed within `congestionMemory`: one interval's
            // send rate jumps with a key frame, and a wall taken from such a peak let the probe climb
            // straight back into the overflow (a 1.7 s freeze under a 500 kbit/s cap, video at 492).
            noteWall(at: delivered, time: report.time)
            reason = "loss"
            lastChange = report.time
            // The loss so far is answered: the next cut waits for loss of packets sent after this one.
            history = [report]
        } else if let rtt = report.roundTripTime, rtt > 0, isQueueing(rtt: rtt),
                  report.time - (lastChange ?? -.infinity) > max(0.5, rtt) {
            // Under what arrives at the far end, when its feedback says: the queue then drains.
            let farEnd = report.transportPackets?.arrivalKbps(whenWeSend: sentKbps)
            target = min(target * 0.85, farEnd.map { $0 * 0.9 } ?? .infinity)
            estimate = min(estimate, sentKbps)
            // What we sent filled the queue: the probe creeps back toward it, not 8 % a second.
            noteWall(at: sentKbps, time: report.time)
            reason = "delay"
            lastChange = report.time
        } else if loss < 0.02, report.time < probeHeldUntil {
            // A queue stands in front of the bottleneck (transport-wide feedback): no higher.
            estimate = max(sentKbps, min(target, Double(settings.maxKbps)))
        } else if loss < 0.02 {
            if let wall = congestion, report.time - wall.time > Self.congestionMemory { congestion = nil }
            if let wall = congestion, target >= wall.kbps * 0.85 {
                target *= 1 + 0.01 * min(interval, 5)
            } else {
                target *= pow108(interval)
            }
            estimate = max(sentKbps, min(target, Double(settings.maxKbps)))
            reason = "probe"
        }
        if let rtt = report.roundTripTime, rtt > 0 { noteRTT(rtt, at: report.time) }
        lastSentKbps = sentKbps
        lastLoss = loss
        return decide(estimate: estimate, sentKbps: sentKbps, loss: loss, reason: reason)
    }

    /// One transport-wide feedback packet: when we sent it, on our clock, and when it arrived,
    /// on the far end's (nil: lost), seconds.
    public struct FeedbackPacket: Sendable, Equatable {
        public var sent: Double
        public var arrived: Double?
        public init(sent: Double, arrived: Double?) {
            self.sent = sent
            self.arrived = arrived
        }
    }

    /// Folds in one transport-wide feedback message (see the type's notes): the queue's delay
    /// holds the probe or cuts the rate before the queue overflows. `time` is the reports' clock.
    /// Returns the new decision when it changed.
    public mutating func update(feedback packets: [FeedbackPacket], at time: Double) -> Decision? {
        let delays = packets.compactMap { packet in packet.arrived.map { (sent: packet.sent, delay: $0 - packet.sent) } }
        guard let newest = delays.map(\.sent).max(), let smallest = delays.map(\.delay).min() else { return nil }
        delayMinima.append((newest, smallest))
        delayMinima.removeAll { newest - $0.sent > Self.delayFloorWindow || $0.sent > newest }
        recentDelays += delays
        recentDelays.removeAll { newest - $0.sent > 0.3 || $0.sent > newest }
        guard let floor = delayMinima.map(\.delay).min(),
              let standing = recentDelays.filter({ newest - $0.sent <= Self.standingWindow }).map(\.delay).min().map({ $0 - floor })
        else { return nil }
        standingQueue = standing
        if standing > Self.queueHoldThreshold { probeHeldUntil = time + 0.5 }
        guard standing > Self.queueCutThreshold, time - (lastChange ?? -.infinity) > 0.3 else { return nil }
        if let last = lastQueueCut, time - last.time < 1.0 {
            // The encoder takes 0.5–1 s to follow a cut, so the queue grows on for a while after
            // one: cut again only when it still grows once that time is mostly over, or nears overflow.
            let since = time - last.time
            guard standing > last.queue, since >= 0.6 || (standing > Self.queueNearFull && since >= 0.3) else { return nil }
        }
        // One queue is one episode: its cuts stop at `queueCutFloor` of the target it started at,
        // since the queue grows on while the encoder follows the first cut, and every further cut
        // then overshoots (481 -> 261 kbit/s under a 500 kbit/s cap, under the frame-rate floor).
        if lastQueueCut.map({ time - $0.time > 2 }) ?? true { queueEpisodeStart = target }
        let lowest = queueEpisodeStart * Self.queueCutFloor
        guard target > lowest + 1 else { return nil }
        noteWall(at: min(target, lastSentKbps > 0 ? lastSentKbps : target), time: time)
        target = min(Double(settings.maxKbps), max(Double(settings.minKbps), lowest, target * 0.85))
        lastChange = time
        lastQueueCut = (time, standing)
        return decide(estimate: min(Double(decision.estimateKbps), target), sentKbps: lastSentKbps, loss: lastLoss, reason: "queue")
    }

    /// The decision for the current target; nil when no setting changed enough to apply.
    private mutating func decide(estimate: Double, sentKbps: Double, loss: Double, reason: String) -> Decision? {
        target = min(Double(settings.maxKbps), max(Double(settings.minKbps), target))
        let targetKbps = Int(target.rounded())
        let next = Decision(targetKbps: targetKbps, estimateKbps: Int(estimate.rounded()),
                            maxFrameRate: halvesFrameRate(targetKbps: targetKbps, sentKbps: sentKbps) ? max(1, fullFrameRate / 2) : nil,
                            fecPercentage: congestion == nil ? Self.fecPercentage(loss: loss) : min(10, Self.fecPercentage(loss: loss)),
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

    /// The share of transport-wide packets lost in the window, when it holds enough of them.
    static func transportLoss(in history: [Report]) -> Double? {
        let samples = history.dropFirst().compactMap(\.transportPackets)
        let sent = samples.reduce(0) { $0 + $1.sent }, lost = samples.reduce(0) { $0 + $1.lost }
        guard sent >= minimumSample else { return nil }
        return min(1, max(0, Double(lost) / Double(sent)))
    }

    /// The share of packets lost between two readings: the worst stream reported at both (webrtcbin
    /// keeps only the far end's latest report block, so which streams are reported changes).
    static func loss(from start: Report, to end: Report) -> Double {
        end.reported.compactMap { ssrc, now -> Double? in
            guard let then = start.reported[ssrc], now.packetsSent > then.packetsSent else { return nil }
            let sent = Double(now.packetsSent - then.packetsSent)
            let reported = now.packetsLost.flatMap { lost in then.packetsLost.map { Double(max(0, lost - $0)) } } ?? 0
            let requested = Double(now.nacks >= then.nacks ? now.nacks - then.nacks : 0)
            return min(1, max(reported, requested) / sent)
        }.max() ?? 0
    }

    /// Parity for random loss, in steps of 5 % up to 20 %: none on a clean path, and little once
    /// the loss is that of a full path (over 20 %, or soon after one overflowed), where parity
    /// packets would only crowd it further.
    public static func fecPercentage(loss: Double) -> Int {
        guard loss >= 0.01 else { return 0 }
        guard loss <= 0.20 else { return 5 }
        return min(20, max(5, Int((loss * 150 / 5).rounded()) * 5))
    }

    /// Below the floor the frame rate is halved, but only while the encoder fills its budget: a
    /// simple picture that needs less than the target (or a target cut to what such a picture
    /// used) loses nothing by keeping every frame. Once halved it stays so until the target is
    /// back over the floor.
    private func halvesFrameRate(targetKbps: Int, sentKbps: Double) -> Bool {
        guard targetKbps < settings.lowRateFloorKbps else { return false }
        return decision.maxFrameRate != nil || sentKbps >= Double(targetKbps) * 0.9
    }

    /// 8 % a second, compounded over the report interval.
    private func pow108(_ seconds: Double) -> Double {
        var factor = 1.0
        var left = min(seconds, 5)
        while left >= 1 { factor *= 1.08; left -= 1 }
        return factor * (1 + 0.08 * left)
    }

    /// The path overflowed (or queued) at `kbps`: the wall is the lowest such rate within
    /// `congestionMemory`.
    private mutating func noteWall(at kbps: Double, time: Double) {
        guard kbps > 0 else { return }
        let recent = congestion.flatMap { time - $0.time <= Self.congestionMemory ? $0.kbps : nil }
        congestion = (min(kbps, recent ?? kbps), time)
    }

    /// True when `rtt` is `queueingMargin` above the smallest round trip of the last 10 s.
    private func isQueueing(rtt: Double) -> Bool {
        guard let floor = rttWindow.map(\.rtt).min() else { return false }
        return rtt > floor + Self.queueingMargin(floor: floor)
    }

    private mutating func noteRTT(_ rtt: Double, at time: Double) {
        rttWindow.append((time, rtt))
        rttWindow.removeAll { time - $0.time > 10 }
    }
}
