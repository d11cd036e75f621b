import BenchmarkSupport
import Foundation
import MediaPipeline
import NetworkTestSupport

/// ECVKit both ends: a `LabCall` (our `PeerConnection` here, an `ecv-network-peer` child inside the
/// lab, signaling over the child's pipes), 320×240 VP8 at 30 fps both ways with the SDK's default
/// bitrate for the size. Here sends sliding colour bars (camera-like motion), the child a moving ball.
enum NetworkEcvkitRun {
    /// The stacks this benchmark runs for ECVKit: the default (NACK/RTX) and, under the cap, `.adaptive`
    /// with a 1.5 Mbit/s ceiling (1.35 Mbit/s of bars), so the cap bites: both stacks' default rates
    /// at 320×240 (about 300 kbit/s) fit under 500 kbit/s.
    static let defaultStack = "ECVKit"
    static let adaptiveStack = "ECVKit .adaptive, 1.5 Mbit/s max"
    static let adaptiveMaxKbps = 1500

    /// Calls per whole-path run.
    static let wholePathCalls = 5

    /// `trace`: print the window's timeline (see `NetworkTrace`).
    static func run(condition: NetworkCondition, adaptive: Bool, repetition: Int, trace: Bool = false) async -> NetworkRun {
        if condition.wholePathLossPercent != nil { return await runWholePath(condition: condition, repetition: repetition) }
        let now = { ProcessInfo.processInfo.systemUptime }
        var result = NetworkRun(stack: adaptive ? adaptiveStack : defaultStack, condition: condition, repetition: repetition,
                                load: MachineInfo.loadAverage())
        let lab: NetworkLab
        do { lab = try NetworkLab() } catch {
            result.failure = "no network lab: \(error)"
            return result
        }
        defer { lab.close() }
        var call: LabCall?
        do {
            try condition.beforeCall(lab, sparing: nil)
            let started = now()
            let connected = try await LabCall.start(lab: lab, recovery: adaptive ? .adaptive : LossRecovery(),
                                                    maxKbps: adaptive ? adaptiveMaxKbps : 0, pattern: LabCall.movingBars,
                                                    timeout: .seconds(40))
            call = connected
            let firstHere = connected.framesHere.all.first ?? now(), firstAtLab = connected.framesAtLab.all.first ?? now()
            result.connectSeconds = max(firstHere, firstAtLab) - started
            let tracer = trace ? NetworkTrace(call: connected) : nil
            defer { tracer?.stop() }
            try await Task.sleep(for: .seconds(NetworkCondition.settle))
            let start = now()
            try condition.begin(lab, sparing: nil)
            let lifted = try await condition.runWindow(lab, from: start, clock: now)
            let end = now()
            let stats = try await connected.local.stats()
            if condition.isRandomLoss { result.droppedPackets = try lab.droppedPackets() }
            let capStatistics = condition == .cap500 && trace ? try lab.rateCapStatistics() : nil
            try condition.end(lab)
            // The child reports its frames over a pipe: let the last of the window arrive.
            try await Task.sleep(for: .milliseconds(500))
            for (side, frames) in [(\NetworkRun.atHost, connected.framesHere), (\NetworkRun.atLab, connected.framesAtLab)] {
                let times = DirectionFigures.spread(DirectionFigures.sampled(frames.all))
                result[keyPath: side] = DirectionFigures(times: times, from: start, to: end, lifted: lifted)
            }
            tracer?.finish(call: connected, title: "\(result.stack), \(condition.title) #\(repetition)", start: start, end: end,
                           capStatistics: capStatistics, pair: stats.candidatePair)
            let videoBytes = stats.outbound.filter { $0.kind == .video }.reduce(0) { $0 + Double($1.bytesSent) }
            result.hostSendKbps = videoBytes * 8 / 1000 / (end - min(firstHere, firstAtLab))
        } catch {
            result.failure = "\(error)"
        }
        await call?.close()
        return result
    }

    /// Signaling through the loss too: the reference service here, `ecv agent` in the lab, SDK
    /// callers here dialing it one after another (`ServiceLab`), the loss on from before the first
    /// call (after the bot logged in). Connect = dialing to the caller's WebRtcConnected.
    static func runWholePath(condition: NetworkCondition, repetition: Int) async -> NetworkRun {
        var result = NetworkRun(stack: defaultStack, condition: condition, repetition: repetition, load: MachineInfo.loadAverage())
        let lab: NetworkLab
        do { lab = try NetworkLab() } catch {
            result.failure = "no network lab: \(error)"
            return result
        }
        defer { lab.close() }
        var started: ServiceLab?
        do {
            let serviceLab = try await ServiceLab.start(lab: lab)
            started = serviceLab
            try condition.beforeCall(lab, sparing: nil)
            var seconds: [Double] = [], failures: [String] = []
            for _ in 0..<wholePathCalls {
                let call = await serviceLab.call(timeout: .seconds(40))
                if let connected = call.connectedAfter { seconds.append(connected) } else { failures.append(call.failure ?? "not connected") }
            }
            result.droppedPackets = try lab.droppedPackets()
            try condition.end(lab)
            result.callsTried = wholePathCalls
            result.callConnectSeconds = seconds
            result.connectSeconds = NetworkMarkdown.median(seconds)
            if !failures.isEmpty { progress("network: ECVKit, \(condition.title) #\(repetition): \(failures.count) calls failed: \(failures)") }
        } catch {
            result.failure = "\(error)"
        }
        await started?.close()
        return result
    }
}
