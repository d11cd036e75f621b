import BenchmarkSupport
import Foundation
import GLibCore
import MediaPipeline
import NetworkTestSupport
import WebRTC

/// `bench-call network --trace`: what happened in an ECVKit run's window, on one timeline (seconds
/// from the window's start), printed with the progress lines: the selected candidate pair; every
/// 250 ms the host's video send rate, the round trip (any stream's latest receiver report) and
/// the far end's NACK/PLI and loss counts for our video; both ends' rate-control decisions; the
/// freezes the lab saw; and both caps' `tc -s qdisc` after the window. For finding when in the
/// window a freeze happens and why; not part of the published figures.
final class NetworkTrace: Sendable {
    private struct Sample: Sendable {
        var time: Double, videoBytes: UInt64, roundTrip: Double?, nacks: UInt64, plis: UInt64, lost: Int?
    }

    private let samples = Locked<[Sample]>([])
    private let sampler: Task<Void, Never>

    /// Starts sampling `call`'s stats every 250 ms.
    init(call: LabCall) {
        let samples = self.samples
        sampler = Task {
            while !Task.isCancelled {
                // A missed sample leaves a longer interval in the trace, nothing more.
                if let stats = try? await call.local.stats(), let video = stats.outbound(.video) {
                    samples.withLock {
                        $0.append(Sample(time: stats.timestamp, videoBytes: video.bytesSent, roundTrip: stats.roundTripTime,
                                         nacks: video.nackCount, plis: video.pliCount, lost: video.remotePacketsLost))
                    }
                }
                // Cancelled: the loop ends at its check.
                try? await Task.sleep(for: .milliseconds(250))
            }
        }
    }

    /// Stops sampling (idempotent; a run that fails before `finish` calls it too).
    func stop() { sampler.cancel() }

    /// Stops sampling and prints the timeline of `call`'s window from `start` to `end`.
    func finish(call: LabCall, title: String, start: Double, end: Double, capStatistics: (towardLab: String, fromLab: String)?,
                pair: PeerStats.CandidatePair?) {
        stop()
        var lines = ["trace: \(title), t = seconds from the window's start; candidate pair "
                     + (pair.map { "\($0.transport ?? "?") \($0.localType ?? "?") → \($0.remoteType ?? "?")" } ?? "unknown")]
        let taken = samples.value
        for (previous, sample) in zip(taken, taken.dropFirst()) where sample.time >= start - 3 && sample.time <= end + 0.5 {
            let kbps = Double(sample.videoBytes &- previous.videoBytes) * 8 / 1000 / max(0.001, sample.time - previous.time)
            lines.append(String(format: "  t %6.2f  video %5.0f kbit/s  rtt %@  nack %d  pli %d  lost %@", sample.time - start, kbps,
                                sample.roundTrip.map { String(format: "%4.0f ms", $0 * 1000) } ?? "   —", Int(sample.nacks),
                                Int(sample.plis), sample.lost.map(String.init) ?? "—"))
        }
        for (side, steps) in [("host", call.bandwidthHere.value), ("lab", call.bandwidthAtLab.value)] {
            for step in steps where step.time >= start - 3 && step.time <= end {
                lines.append(String(format: "  t %6.2f  %@ decides %@ target %d estimate %d", step.time - start, side, step.reason,
                                    step.targetKbps, step.estimateKbps))
            }
        }
        let frames = call.framesAtLab.all.filter { $0 >= start && $0 < end }
        let edges = [start] + frames + [end]
        for (from, to) in zip(edges, edges.dropFirst()) where to - from > DirectionFigures.freezeThreshold {
            lines.append(String(format: "  t %6.2f  lab frozen %.2f s", from - start, to - from))
        }
        if let capStatistics {
            lines.append("  cap toward the lab: " + capStatistics.towardLab.split(separator: "\n").joined(separator: " | "))
            lines.append("  cap from the lab: " + capStatistics.fromLab.split(separator: "\n").joined(separator: " | "))
        }
        progress(lines.joined(separator: "\n"))
    }
}
