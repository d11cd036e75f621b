import Foundation
import Testing

/// Benchmarks are programs, not tests; CI only checks that each still runs (`--smoke`: seconds,
/// tiny frame counts, results in a temporary directory).
@Suite(.serialized) struct BenchmarkSmokeTests {
    static func program(_ name: String) -> URL { ECVProcess.executable.deletingLastPathComponent().appendingPathComponent(name) }

    static func run(_ name: String, _ arguments: [String]) async throws -> (Int32, String) {
        let process = Process()
        process.executableURL = program(name)
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let text = await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(returning: String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self))
            }
        }
        process.waitUntilExit()
        return (process.terminationStatus, text)
    }

    @Test(arguments: [["run", "--smoke", "--no-publish"], ])
    func encodeBenchmarkRuns(arguments: [String]) async throws {
        let (status, output) = try await Self.run("bench-encode", arguments)
        #expect(status == 0, "\(output.suffix(2000))")
    }

    @Test(arguments: ["g2g", "setup", "cost"])
    func callBenchmarkRuns(command: String) async throws {
        let (status, output) = try await Self.run("bench-call", [command, "--smoke"])
        #expect(status == 0, "\(output.suffix(2000))")
        #expect(output.contains("|"), "it printed its table")
    }

    @Test func acdBenchmarkRuns() async throws {
        let (status, output) = try await Self.run("bench-acd", ["--smoke", "--no-publish"])
        #expect(status == 0, "\(output.suffix(2000))")
        #expect(output.contains("| DialEx |"), "it printed its table")
    }

    @Test func connectionsBenchmarkRuns() async throws {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../Benchmarks/connections/hold_connections.py")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script.standardized.path, "--ecv", ECVProcess.executable.path, "--count", "20", "--seconds", "1.5",
                             "--no-publish"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let text = await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(returning: String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self))
            }
        }
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(text.suffix(2000))")
        #expect(text.contains("| 20 idle + 20 slow-header"), "it printed its table: \(text.suffix(500))")
    }
}
