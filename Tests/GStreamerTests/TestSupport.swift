import Foundation
import GLibCore
@testable import GStreamer
import Synchronization
import Testing

/// Initialises GStreamer for tests with the leaks tracer on, exactly once per process.
enum TestRuntime {
    static let ready: Void = {
        LeakTracer.enableBeforeInitialization()
        try! GStreamerRuntime.ensureInitialized()
    }()
}

/// Runs `scenario` once to warm per-process caches (plugins load on first use), then
/// `repetitions` more times under leak tracking, and reports every GstObject/GstMiniObject type
/// created during those runs that is still alive after asynchronous releases (main-loop
/// dispatches, streaming threads winding down) had time to finish.
func leakedObjects(repetitions: Int = 3, _ scenario: () async throws -> Void) async throws -> [String: Int] {
    _ = TestRuntime.ready
    try await scenario()
    try await settle()
    let tracking = try #require(LeakTracer.startTracking(), "the leaks tracer must be active and no other tracking run (tests that track need --no-parallel)")
    for _ in 0..<repetitions { try await scenario() }
    var survivors: [String: Int] = [:]
    for _ in 0..<40 {
        try await settle()
        survivors = tracking.survivors()
        if survivors.isEmpty { break }
    }
    return survivors
}

/// Waits until `condition` holds, checking every 10 ms; throws instead of hanging when it still
/// does not after `timeout`.
func waitUntil(_ what: String, timeout: Duration = .seconds(10), _ condition: () -> Bool) async throws {
    let deadline = ContinuousClock.now + timeout
    while !condition() {
        guard ContinuousClock.now < deadline else { throw NotInTime(what: what, timeout: timeout) }
        try await Task.sleep(for: .milliseconds(10))
    }
}

struct NotInTime: Error, CustomStringConvertible {
    let what: String
    let timeout: Duration
    var description: String { "not within \(timeout): \(what)" }
}

/// Lets pending main-loop work run.
func settle() async throws {
    await MainLoop.shared.run { () }
    try await Task.sleep(for: .milliseconds(50))
}

/// Threads and open file descriptors of this process, from /proc.
func processThreadCount() -> Int {
    let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
    let line = status.split(separator: "\n").first { $0.hasPrefix("Threads:") }
    return Int(line?.split(separator: "\t").last?.trimmingCharacters(in: .whitespaces) ?? "") ?? -1
}

func processResidentKilobytes() -> Int {
    let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
    let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") }
    return Int(line?.split(whereSeparator: { $0 == " " || $0 == "\t" }).dropFirst().first ?? "") ?? -1
}

func openFileDescriptorCount() -> Int {
    (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? -1
}

/// Counts buffers crossing a pad, thread-safely.
final class Counter: Sendable {
    private let value = Mutex(0)
    func increment() { value.withLock { $0 += 1 } }
    var count: Int { value.withLock { $0 } }
}
