import ECV
import ECVProtocol
import ECVService
import Foundation
import GLibCore
import GStreamer
import Testing

/// Resident memory of a process, from /proc/<pid>/status (VmRSS), in KiB.
func residentKiB(of pid: Int32) -> Int? {
    guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
          let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }) else { return nil }
    return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
}

/// Counts the frames it is given.
final class FrameCount: VideoRenderer {
    private let frames = Locked(0)
    var count: Int { frames.value }
    func setSize(width: Int, height: Int) {}
    func renderFrame(_ frame: VideoFrame?) { frames.withLock { $0 += 1 } }
}

/// The issue's "agent bot RSS grows 13–18 MB per call and never comes back": a real `ecv agent`
/// answers 30 calls in a row, each with media both ways, and its memory after each call is read
/// from /proc (the child process only: this process runs the callers and the service).
@Suite(.serialized) struct AgentMemoryTests {
    /// Waits for the first event of `type` on `events`, bounded.
    static func next(_ type: VideoCallEventType, in events: AsyncStream<VideoCallEvent>, within seconds: Double = 20) async throws -> VideoCallEvent {
        try await withThrowingTaskGroup(of: VideoCallEvent?.self) { group in
            group.addTask {
                for await event in events where event.type == type { return event }
                return nil
            }
            group.addTask {
                try await Task.sleep(for: .seconds(seconds))
                return nil
            }
            defer { group.cancelAll() }
            guard let event = try await group.next() ?? nil else { throw CallerKillTimeout(what: "\(type)") }
            return event
        }
    }

    @Test func thirtyCallsThroughOneAgentLeaveItsMemoryWhereItWas() async throws {
        Logger.setLevel(logLevel: .warn)
        let (service, base) = try await startLoopbackService()
        let agent = try RunningECV(["agent", "--service-url", base, "--name", "Bot", "--json", "--width", "160", "--height", "120",
                                    "--fps", "15", "--no-audio-processing"])
        defer { agent.stop() }
        try await eventually(.seconds(20), "the agent ready") { service.acd.snapshot().agents.first?.state == .ready }
        let sdk = try ECVSdk(config: ECVSdkConfiguration(name: "memory", serviceUrl: base, useQueueSocket: true))

        var resident: [Int] = []
        for index in 0..<30 {
            let call = try #require(await sdk.createVideoCall())
            let events = call.events()
            await call.start(dialCallParameters: DialCallParameters(callerName: "Caller \(index)"))
            _ = try await Self.next(.AgentConnected, in: events)
            let connection = try #require(call.connect(parameters: ConnectParameters(videoWidth: 160, videoHeight: 120, videoFps: 15,
                                                                                   noAudioProcessing: true)))
            await connection.startRoom()
            _ = try await Self.next(.WebRtcConnected, in: events)
            let frames = FrameCount()
            connection.remoteVideoRenderer = frames
            try await eventually(.seconds(10), "agent video at the caller") { frames.count >= 8 }
            call.hangup()
            _ = try await Self.next(.CallEnded, in: events)
            let ended = index + 1
            try await eventually(.seconds(20), "the agent ended call \(ended)") {
                agent.stdout.components(separatedBy: #""event":"callEnded""#).count - 1 >= ended
                    && service.acd.snapshot().agents.first?.state == .ready
            }
            resident.append(try #require(residentKiB(of: agent.pid)))
        }
        // Growth from call 5 to call 30, each end a median of three calls (one call's teardown
        // can be caught half-way). Measured on the 2-core machine: 11.5 MiB before the fix
        // (glibc kept what each call's media threads freed in up to 16 arenas: ~460 KiB per call,
        // for ever), 1.2–2.9 MiB after it (2 arenas per core, malloc_trim after each call; GStreamer objects do
        // not pile up: after 30 calls the leaks tracer finds less than one call's worth alive). 5 MiB is well over the worst run after, under half
        // the growth before.
        func median(_ range: ClosedRange<Int>) -> Int { resident[range].sorted()[1] }
        let growth = median(27...29) - median(3...5)
        print("agent RSS after each call (KiB): \(resident); growth from call 5 to 30: \(growth) KiB")
        #expect(growth < 5 * 1024, "the agent's memory grew \(growth) KiB over 25 calls: \(resident)")
        #expect(agent.process.isRunning)
        kill(agent.pid, SIGINT)
        _ = try await agent.exitStatus(within: .seconds(15))
        await service.stop()
    }
}
