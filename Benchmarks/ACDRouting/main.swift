// bench-acd: what one DialEx (and its Hangup) costs the reference ACD as the queue grows, with
// 1,000 agents all busy, and what routing a freed agent costs. Prints a Markdown table.
// Target: the per-request cost stays flat from 10 to 10,000 queued calls.
import ECVProtocol
import ECVService
import Foundation

let agentCount = 1_000
let queuedCounts = [10, 1_000, 10_000]
let rounds = 2_000

func microseconds(_ body: () throws -> Void) rethrows -> Double {
    let start = ContinuousClock.now
    try body()
    let elapsed = ContinuousClock.now - start
    return Double(elapsed.components.seconds) * 1e6 + Double(elapsed.components.attoseconds) / 1e12
}

func engine(queued: Int) throws -> (ACDEngine, ManualACDClock) {
    let clock = ManualACDClock()
    let engine = try ACDEngine(configuration: ACDConfiguration(queues: ["default"], offerTimeout: 1e9, endedCallRetention: 0,
                                                               acceptsUnissuedRtcIds: true, identifiers: .sequential),
                               clock: clock) { _ in }
    var agents: [String] = []
    for index in 0..<agentCount {
        let login = try engine.login(name: "agent \(index)")
        try engine.perform(.ready(queues: ["default"]), agentId: login.agentId)
        agents.append(login.agentId)
    }
    // Every agent takes a call and stays busy.
    for index in 0..<agentCount {
        let rtcId = "busy-\(index)"
        _ = try engine.dial(DialExRequest(rtcId: rtcId, callerName: "Busy \(index)"))
        let snapshot = engine.snapshot()
        guard let agentId = snapshot.agents.first(where: { $0.rtcId == rtcId })?.agentId else { continue }
        try engine.perform(.accept(rtcId: rtcId), agentId: agentId)
    }
    for index in 0..<queued { _ = try engine.dial(DialExRequest(rtcId: "queued-\(index)", callerName: "Q \(index)")) }
    return (engine, clock)
}

print("| queued calls | agents (all busy) | DialEx + Hangup, µs per pair | queue-info poll, µs |")
print("| ---: | ---: | ---: | ---: |")
for queued in queuedCounts {
    let (engine, _) = try engine(queued: queued)
    var index = 0
    let pair = try microseconds {
        for _ in 0..<rounds {
            let rtcId = "probe-\(index)"
            index += 1
            _ = try engine.dial(DialExRequest(rtcId: rtcId, callerName: "Probe"))
            try engine.hangUp(rtcId: rtcId)
        }
    } / Double(rounds)
    let poll = microseconds {
        for _ in 0..<200 { _ = engine.queueInfo(rtcId: "queued-\(queued - 1)") }
    } / 200
    print("| \(queued) | \(agentCount) | \(String(format: "%.1f", pair)) | \(String(format: "%.1f", poll)) |")
}
