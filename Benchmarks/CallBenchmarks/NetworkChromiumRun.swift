import BenchmarkSupport
import ECVProtocol
import ECVService
import Foundation
import NetworkTestSupport

/// Chromium both ends: the reference service's browser page in two headless Chromiums, one here
/// and one inside the lab (`ip netns exec`), in one room of a service on the lab's host address
/// without caller tokens (a room is open to whoever joins). 320×240 VP8 at 30 fps both ways from
/// Chromium's fake camera, libwebrtc's own bitrate and loss handling. Frame times come from
/// `requestVideoFrameCallback` on each page's remote `<video>` (`?watch=frames`), on the wall clock.
enum NetworkChromiumRun {
    static let stack = "Chromium"

    struct Tools: Sendable {
        var python: String
        var script: String
    }

    static func run(condition: NetworkCondition, repetition: Int, tools: Tools) async -> NetworkRun {
        let now = { Date().timeIntervalSince1970 }
        var result = NetworkRun(stack: stack, condition: condition, repetition: repetition, load: MachineInfo.loadAverage())
        let lab: NetworkLab
        do { lab = try NetworkLab() } catch {
            result.failure = "no network lab: \(error)"
            return result
        }
        defer { lab.close() }
        var peers: [BrowserPeer] = []
        var service: ReferenceService?
        do {
            var configuration = ReferenceServiceConfiguration()
            configuration.issuesCallerTokens = false
            configuration.iceServers = []
            let started = try ReferenceService(configuration: configuration)
            service = started
            let serviceURL = try await started.start(host: lab.hostAddress, port: 0)
            let base = serviceURL.absoluteString.trimmingCharacters(in: CharacterSet(charactersIn: "/"))
            let servicePort = serviceURL.port.flatMap { UInt16(exactly: $0) }
            // Whole-path conditions put the service's port under the loss too: the page and its signaling cross it.
            try condition.beforeCall(lab, sparing: condition.wholePathLossPercent == nil ? servicePort : nil)
            let room = "netbench-\(getpid())-\(repetition)-\(condition.rawValue)"
            // Each page measures from its channel opening; the schedule below starts at the later one.
            let duration = NetworkCondition.settle + NetworkCondition.window + 4
            func page(_ role: String) -> String {
                "\(base)/r/\(room)?role=\(role)&codec=VP8&video=320x240&watch=frames"
            }
            peers.append(try BrowserPeer(name: "chromium here", prefix: [], python: tools.python, script: tools.script,
                                         page: page("caller"), duration: duration))
            peers.append(try BrowserPeer(name: "chromium in the lab", prefix: ["/usr/sbin/ip", "netns", "exec", lab.namespace],
                                         python: tools.python, script: tools.script, page: page("agent"), duration: duration))
            for peer in peers { try await peer.waitFor("connected", timeout: 90) }
            try await Task.sleep(for: .seconds(NetworkCondition.settle))
            let start = now()
            try condition.begin(lab, sparing: servicePort)
            let lifted = try await condition.runWindow(lab, from: start, clock: now)
            let end = now()
            if condition.isRandomLoss { result.droppedPackets = try lab.droppedPackets() }
            try condition.end(lab)
            let here = try await peers[0].summary(timeout: 60), atLab = try await peers[1].summary(timeout: 60)
            for (name, summary) in [("here", here), ("in the lab", atLab)] where !summary.ok {
                throw BrowserPeerError(message: "chromium \(name): \(summary.errors.joined(separator: "; "))")
            }
            let atHostTimes = try frameTimes(here, "here"), atLabTimes = try frameTimes(atLab, "in the lab")
            result.atHost = DirectionFigures(times: atHostTimes, from: start, to: end, lifted: lifted)
            result.atLab = DirectionFigures(times: atLabTimes, from: start, to: end, lifted: lifted)
            if let joinedHere = here.state?.joinedAt, let joinedAtLab = atLab.state?.joinedAt {
                result.connectSeconds = max(atHostTimes[0], atLabTimes[0]) - max(joinedHere, joinedAtLab) / 1000
            }
            if let bytes = here.stats?.video?.outbound?.bytesSent, let seconds = here.mediaSeconds, seconds > 0 {
                result.hostSendKbps = bytes * 8 / 1000 / seconds
            }
            result.chromiumFreezeSeconds = [
                "atHost": here.stats?.video?.inbound?.totalFreezesDuration,
                "atLab": atLab.stats?.video?.inbound?.totalFreezesDuration,
            ].compactMapValues { $0 }
        } catch {
            result.failure = "\(error)" + (await pageLogs(peers))
            // The blackhole or cap must not outlive a failed run's browsers' goodbyes.
            try? condition.end(lab)
        }
        for peer in peers { await peer.close() }
        await service?.stop()
        return result
    }

    /// A page's decoded-frame samples as frame times in seconds (see `DirectionFigures.spread`).
    static func frameTimes(_ summary: BrowserSummary, _ name: String) throws -> [Double] {
        let samples = (summary.frames ?? []).compactMap { pair in pair.count == 2 ? (time: pair[0] / 1000, count: pair[1]) : nil }
        let times = DirectionFigures.spread(samples)
        guard !times.isEmpty else { throw BrowserPeerError(message: "chromium \(name): the page sampled no decoded frames") }
        return times
    }

    /// The last lines of each page's log, for a failed run's record (the peers print a summary on failing too).
    static func pageLogs(_ peers: [BrowserPeer]) async -> String {
        var text = ""
        for peer in peers {
            // A peer that printed nothing in time has no page log to add.
            guard let summary = try? await peer.summary(timeout: 50) else { continue }
            text += "; \(peer.name): " + ((summary.log ?? []).suffix(4) + summary.errors).joined(separator: " · ")
        }
        return text
    }
}
