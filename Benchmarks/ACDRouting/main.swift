// bench-acd: what each kind of request costs the reference ACD with 1,000 agents, all busy, and
// 10, 1,000 and 10,000 calls waiting in the queue. Every request is timed on its own; the table
// gives the nearest-rank p50 and p99 per kind and queue size, in µs. Target: flat from 10 to
// 10,000 queued calls (Benchmarks/README.md).
//
//   bench-acd [--rounds N] [--results DIR] [--no-publish] [--smoke]
//
// Publishes Benchmarks/results/acd-<timestamp>.{json,md} and acd-latest.{json,md}.
import BenchmarkSupport
import ECVProtocol
import ECVService
import Foundation
import Synchronization

struct ACDFigure: Codable {
    var queued: Int
    var agents: Int
    var kind: String
    var samples: Int
    var p50Microseconds: Double
    var p99Microseconds: Double
    var maxMicroseconds: Double
}

struct ACDReport: Codable {
    var machine: MachineInfo
    var smoke: Bool
    var method: String
    var figures: [ACDFigure]
    var load: LoadWindow
}

/// The request kinds, in table order.
let kinds: [(name: String, what: String)] = [
    ("GetRtcId", "`POST /api/GetRtcId`: a new rtcId"),
    ("DialEx", "`POST /api/DialEx`: a new call joins the end of the queue (no agent free)"),
    ("Hangup (queued)", "`POST /api/Hangup` of that call, from the end of the queue"),
    ("poll, last in queue", "`WaitForRoomQueueInterval` for the call at the end: position and EWT"),
    ("poll, first in queue", "the same for the call at the head"),
    ("GET /api/Queues", "the queue overview (the health check of `ecv serve`)"),
    ("agent not ready", "a busy agent's state change (routing runs)"),
    ("agent ready", "and back"),
    ("agent hangup → next call offered", "an agent ends its call; routing offers it the queue's first call"),
    ("accept", "the agent accepts that offer"),
    ("timers (nextDeadline + tick)", "what the service's deadline timer does after each request"),
]

let arguments = Array(CommandLine.arguments.dropFirst())
let options: Options
do {
    options = try Options(arguments, flags: ["smoke", "no-publish"], valued: ["rounds", "results"])
} catch {
    FileHandle.standardError.write(Data("bench-acd: \(error)\n".utf8))
    exit(2)
}
let smoke = options.has("smoke")
let agentCount = smoke ? 20 : 1_000
let queuedCounts = smoke ? [10, 100] : [10, 1_000, 10_000]
let rounds = (try? options.int("rounds", default: smoke ? 50 : 2_000, range: 10...1_000_000)) ?? 2_000

/// Offers as the engine emits them (agentId → rtcId), so the benchmark never needs a snapshot.
final class Offers: Sendable {
    private let last = Mutex<[String: String]>([:])
    func record(_ event: ACDEvent) {
        if case .toAgent(let agentId, .offer(let offer)) = event { last.withLock { $0[agentId] = offer.rtcId } }
    }
    func take(_ agentId: String) -> String? { last.withLock { $0.removeValue(forKey: agentId) } }
}

struct Setup {
    let engine: ACDEngine
    let offers: Offers
    /// agentId → the call it is busy with.
    var busy: [String: String]
    /// Queued calls, oldest first.
    var queue: [String]
    var next = 0

    mutating func freshId(_ prefix: String) -> String {
        next += 1
        return "\(prefix)-\(next)"
    }
}

func setUp(queued: Int) throws -> Setup {
    let offers = Offers()
    let engine = try ACDEngine(configuration: ACDConfiguration(queues: ["default"], offerTimeout: 1e9, endedCallRetention: 0,
                                                               acceptsUnissuedRtcIds: true, identifiers: .sequential),
                               clock: ManualACDClock()) { offers.record($0) }
    var setup = Setup(engine: engine, offers: offers, busy: [:], queue: [])
    for index in 0..<agentCount {
        let agentId = try engine.login(name: "agent \(index)").agentId
        try engine.perform(.ready(queues: ["default"]), agentId: agentId)
        // Every agent takes a call and stays busy.
        let rtcId = setup.freshId("busy")
        _ = try engine.dial(DialExRequest(rtcId: rtcId, callerName: "Busy"))
        guard offers.take(agentId) == rtcId else { throw BenchmarkError.failed("\(rtcId) was not offered to \(agentId)") }
        try engine.perform(.accept(rtcId: rtcId), agentId: agentId)
        setup.busy[agentId] = rtcId
    }
    for _ in 0..<queued {
        let rtcId = setup.freshId("queued")
        _ = try engine.dial(DialExRequest(rtcId: rtcId, callerName: "Q"))
        setup.queue.append(rtcId)
    }
    return setup
}

func microseconds(_ body: () throws -> Void) rethrows -> Double {
    let start = ContinuousClock.now
    try body()
    let elapsed = ContinuousClock.now - start
    return Double(elapsed.components.seconds) * 1e6 + Double(elapsed.components.attoseconds) / 1e12
}

func measure(queued: Int) throws -> [String: [Double]] {
    var setup = try setUp(queued: queued)
    let engine = setup.engine
    var samples: [String: [Double]] = [:]
    func add(_ kind: String, _ value: Double) { samples[kind, default: []].append(value) }
    let agents = setup.busy.keys.sorted()
    for round in 0..<rounds {
        add("GetRtcId", microseconds { _ = engine.issueRtcId() })
        let probe = setup.freshId("probe")
        add("DialEx", try microseconds { _ = try engine.dial(DialExRequest(rtcId: probe, callerName: "Probe")) })
        add("poll, last in queue", microseconds { _ = engine.queueInfo(rtcId: probe) })
        add("Hangup (queued)", try microseconds { try engine.hangUp(rtcId: probe) })
        if let head = setup.queue.first { add("poll, first in queue", microseconds { _ = engine.queueInfo(rtcId: head) }) }
        add("GET /api/Queues", microseconds { _ = engine.queueSummaries() })

        let agentId = agents[round % agents.count]
        add("agent not ready", try microseconds { try engine.perform(.notReady, agentId: agentId) })
        add("agent ready", try microseconds { try engine.perform(.ready(queues: ["default"]), agentId: agentId) })
        if let current = setup.busy[agentId], !setup.queue.isEmpty {
            add("agent hangup → next call offered", try microseconds { try engine.perform(.hangup(rtcId: current), agentId: agentId) })
            guard let offered = setup.offers.take(agentId), offered == setup.queue.first else {
                throw BenchmarkError.failed("the freed agent was not offered the queue's first call")
            }
            add("accept", try microseconds { try engine.perform(.accept(rtcId: offered), agentId: agentId) })
            setup.queue.removeFirst()
            setup.busy[agentId] = offered
            // The queue keeps its length.
            let refill = setup.freshId("queued")
            _ = try engine.dial(DialExRequest(rtcId: refill, callerName: "Q"))
            setup.queue.append(refill)
        }
        add("timers (nextDeadline + tick)", microseconds {
            _ = engine.nextDeadline
            engine.tick()
        })
    }
    return samples
}

let machine = MachineInfo.current()
let section = SectionTimer()
var figures: [ACDFigure] = []
for queued in queuedCounts {
    progress("bench-acd: \(queued) queued calls, \(agentCount) busy agents, \(rounds) rounds")
    let samples: [String: [Double]]
    do { samples = try measure(queued: queued) } catch {
        FileHandle.standardError.write(Data("bench-acd: \(error)\n".utf8))
        exit(1)
    }
    for (kind, _) in kinds {
        guard let values = samples[kind], let summary = LatencySummary(milliseconds: values) else { continue }
        // LatencySummary is unit-agnostic: the samples are µs here.
        figures.append(ACDFigure(queued: queued, agents: agentCount, kind: kind, samples: summary.count,
                                 p50Microseconds: summary.p50, p99Microseconds: summary.p99, maxMicroseconds: summary.max))
    }
}
let report = ACDReport(
    machine: machine, smoke: smoke,
    method: "One ACDEngine (the reference service's) on a manual clock, \(number(agentCount)) agents logged in and ready on one queue, "
        + "each on a call, then N calls queued behind them. Each round times every request kind once, alone "
        + "(ContinuousClock around the call; the event handler only records offers); \(rounds) rounds per queue size. "
        + "The agent-hangup round frees one agent, which routing offers the queue's first call; it accepts, and a new call "
        + "refills the queue, so N stays constant. p50/p99: nearest rank.",
    figures: figures, load: section.finish())

func number(_ value: Int) -> String {
    let formatter = NumberFormatter()
    formatter.numberStyle = .decimal
    formatter.groupingSeparator = ","
    return formatter.string(from: NSNumber(value: value)) ?? "\(value)"
}

func render(_ report: ACDReport) -> String {
    let sizes = queuedCounts
    var lines: [String] = []
    lines.append("# Reference ACD, cost per request, \(report.machine.date)" + (report.smoke ? " (smoke run: meaningless)" : ""))
    lines.append("")
    lines.append("| machine | |")
    lines.append("| --- | --- |")
    lines.append("| CPU | \(report.machine.cpuModel) |")
    lines.append("| cores | \(report.machine.cores) |")
    lines.append("| kernel | \(report.machine.kernel) |")
    lines.append("| Swift | \(report.machine.swift) |")
    lines.append("| load average at start (1/5/15 min) | \(report.machine.loadAverage.map { String(format: "%.2f", $0) }.joined(separator: " / ")) |")
    lines.append("")
    lines.append(report.method)
    lines.append("")
    lines.append("µs per request, p50 / p99, with \(number(agentCount)) busy agents and this many calls queued:")
    lines.append("")
    lines.append("| request | " + sizes.map { "\(number($0)) queued" }.joined(separator: " | ") + " |")
    lines.append("| --- | " + sizes.map { _ in "---:" }.joined(separator: " | ") + " |")
    for (kind, _) in kinds {
        let cells = sizes.map { size -> String in
            guard let figure = report.figures.first(where: { $0.queued == size && $0.kind == kind }) else { return "–" }
            return String(format: "%.1f / %.1f", figure.p50Microseconds, figure.p99Microseconds)
        }
        lines.append("| \(kind) | " + cells.joined(separator: " | ") + " |")
    }
    lines.append("")
    for (kind, what) in kinds { lines.append("- \(kind): \(what).") }
    lines.append("")
    lines.append(String(format: "Load average (1 min) %.2f at the start, %.2f at the end; took %.0f s.",
                        report.load.start, report.load.end, report.load.wallSeconds))
    return lines.joined(separator: "\n") + "\n"
}

let markdown = render(report)
print(markdown)
if !options.has("no-publish") {
    let directory = options.values["results"]
        ?? (smoke ? (NSTemporaryDirectory() as NSString).appendingPathComponent("ecvkit-bench-acd-\(getpid())") : "Benchmarks/results")
    let formatter = DateFormatter()
    formatter.locale = Locale(identifier: "en_US_POSIX")
    formatter.timeZone = TimeZone(identifier: "UTC")
    formatter.dateFormat = "yyyyMMdd'T'HHmmss'Z'"
    let stamp = formatter.string(from: Date())
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
    do {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let json = try encoder.encode(report)
        for name in ["acd-\(stamp)", "acd-latest"] {
            let base = (directory as NSString).appendingPathComponent(name)
            try json.write(to: URL(fileURLWithPath: base + ".json"))
            try markdown.write(toFile: base + ".md", atomically: true, encoding: .utf8)
            progress("wrote \(base).json, \(base).md")
        }
    } catch {
        FileHandle.standardError.write(Data("bench-acd: cannot write the results: \(error)\n".utf8))
        exit(1)
    }
}
