import Foundation
import NetworkTestSupport

/// One impairment of `bench-call network`, applied to a `NetworkLab` the same way for ECVKit and
/// for Chromium. Every run: the call connects (under the loss already for `loss20`, whose set-up
/// time is part of what is measured), 3 s on the path as it is, then the measured window of
/// `NetworkCondition.window` seconds, which starts when the impairment does.
enum NetworkCondition: String, CaseIterable, Codable, Sendable {
    case clean
    case loss5 = "loss-5"
    case loss20 = "loss-20"
    case cap500 = "cap-500"
    case blackhole5 = "blackhole-5s"
    /// Random loss on the whole path of the agent's side, signaling included (`ServiceLab`): what is
    /// measured is how many calls connect, and how fast.
    case wholeLoss5 = "whole-loss-5"
    case wholeLoss20 = "whole-loss-20"

    static let window = 20.0
    static let settle = 3.0
    static let blackholeSeconds = 5.0

    var title: String {
        switch self {
        case .clean: "clean path"
        case .loss5: "5 % random loss"
        case .loss20: "20 % random loss"
        case .cap500: "500 kbit/s cap"
        case .blackhole5: "5 s blackhole"
        case .wholeLoss5: "5 % loss, whole path"
        case .wholeLoss20: "20 % loss, whole path"
        }
    }

    /// The loss on the whole path, signaling included, for the conditions that have one.
    var wholePathLossPercent: Int? {
        switch self {
        case .wholeLoss5: 5
        case .wholeLoss20: 20
        default: nil
        }
    }

    /// Random loss of any kind: the run counts the packets dropped.
    var isRandomLoss: Bool { self == .loss5 || self == .loss20 || wholePathLossPercent != nil }

    /// Before the call starts: only the 20 % loss, so set-up happens under it.
    ///
    /// Loss takes UDP and TCP alike (a call over an ICE-TCP pair would otherwise escape it) but
    /// spares `servicePort`: the in-lab browser's page and signaling socket on the reference
    /// service are not part of the path being measured (ECVKit's signaling does not cross the
    /// lab at all, so its runs pass nil).
    func beforeCall(_ lab: NetworkLab, sparing servicePort: UInt16?) throws {
        if self == .loss20 { try lab.setLoss(percent: 20, sparingTCPPort: servicePort) }
        if let percent = wholePathLossPercent { try lab.setLoss(percent: percent) }
    }

    /// At the window's start; loss as in `beforeCall`.
    func begin(_ lab: NetworkLab, sparing servicePort: UInt16?) throws {
        switch self {
        case .clean, .loss20, .wholeLoss5, .wholeLoss20: break
        case .loss5: try lab.setLoss(percent: 5, sparingTCPPort: servicePort)
        case .cap500: try lab.setRateCap(kbps: 500)
        case .blackhole5: try lab.setBlackhole(true)
        }
    }

    /// Sleeps through the window from `start` (a `clock()` reading), lifting a blackhole after 5 s;
    /// returns when the path came back (blackhole) or nil.
    func runWindow(_ lab: NetworkLab, from start: Double, clock: () -> Double) async throws -> Double? {
        var lifted: Double?
        if self == .blackhole5 {
            try await Task.sleep(for: .seconds(max(0, start + Self.blackholeSeconds - clock())))
            try lab.setBlackhole(false)
            lifted = clock()
        }
        try await Task.sleep(for: .seconds(max(0, start + Self.window - clock())))
        return lifted
    }

    /// Back to a clean path.
    func end(_ lab: NetworkLab) throws {
        try lab.setLoss(percent: 0)
        if self == .cap500 { try lab.setRateCap(kbps: nil) }
    }
}

/// What one receiving direction saw in the window, from the times its video frames arrived.
struct DirectionFigures: Codable, Sendable {
    /// Frames in the window ÷ its length.
    var fps: Double
    /// The sum of every gap between frames longer than `freezeThreshold`, the edges of the window
    /// counting as frames (a picture frozen when the window opens is frozen from its start).
    var freezeSeconds: Double
    var longestFreezeSeconds: Double
    var freezes: Int
    var frames: Int
    /// From the path coming back to the first frame after it (blackhole only).
    var mediaBackSeconds: Double?

    /// A frame interval of 30 fps times 3 is 100 ms; a gap under 150 ms is not seen as a freeze.
    static let freezeThreshold = 0.150

    /// From `(time, frames so far)` samples, as Chromium's page takes them every 50 ms: the frames
    /// counted since the previous sample spread evenly up to this one.
    static func spread(_ samples: [(time: Double, count: Double)]) -> [Double] {
        zip(samples, samples.dropFirst()).flatMap { previous, next -> [Double] in
            let frames = Int(max(0, next.count - previous.count))
            return (0..<frames).map { previous.time + (next.time - previous.time) * Double($0 + 1) / Double(frames) }
        }
    }

    /// Exact frame times sampled the way Chromium's are (every 50 ms from the first frame), so both
    /// stacks' freezes go through the same measurement.
    static func sampled(_ times: [Double], every interval: Double = 0.05) -> [(time: Double, count: Double)] {
        guard let first = times.first, let last = times.last else { return [] }
        var samples: [(time: Double, count: Double)] = [(first - interval, 0)]
        var counted = 0
        var time = first
        while time < last + interval {
            while counted < times.count, times[counted] <= time { counted += 1 }
            samples.append((time, Double(counted)))
            time += interval
        }
        return samples
    }

    init(times: [Double], from start: Double, to end: Double, lifted: Double?) {
        let inside = times.filter { $0 >= start && $0 < end }
        frames = inside.count
        fps = Double(inside.count) / (end - start)
        let edges = [start] + inside + [end]
        let gaps = zip(edges, edges.dropFirst()).map { $1 - $0 }.filter { $0 > Self.freezeThreshold }
        freezeSeconds = gaps.reduce(0, +)
        longestFreezeSeconds = gaps.max() ?? 0
        freezes = gaps.count
        mediaBackSeconds = lifted.flatMap { lift in times.first { $0 >= lift }.map { $0 - lift } }
    }
}

/// One run of one stack under one condition.
struct NetworkRun: Codable, Sendable {
    var stack: String
    var condition: NetworkCondition
    var repetition: Int
    /// From starting the call (ECVKit) or the second page joining the room (Chromium) to a first
    /// decoded frame in both directions.
    var connectSeconds: Double?
    /// Receiving at the host end (sent from inside the lab), and inside the lab.
    var atHost: DirectionFigures?
    var atLab: DirectionFigures?
    /// Mean video bitrate the host end sent, from media flowing to the window's end (ECVKit) or over
    /// the page's whole call (Chromium).
    var hostSendKbps: Double?
    /// Chromium's own `totalFreezesDuration` over the whole call as a cross-check, per receiving
    /// end (`atHost`, `atLab`).
    var chromiumFreezeSeconds: [String: Double]?
    /// Packets the loss rules dropped during the run, both directions (random loss only).
    var droppedPackets: Int?
    /// Whole-path conditions, ECVKit: calls dialled one after another in the run, and the seconds
    /// from dialing to WebRtcConnected of each that connected.
    var callsTried: Int?
    var callConnectSeconds: [Double]?
    var load: [Double]
    /// Why the run measured nothing (it is kept, never retried).
    var failure: String?
}
