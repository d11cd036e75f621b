import Foundation
import GLibCore
import Glibc

/// Runs a program to completion and reports its exit status, wall time and the CPU time the
/// kernel charged to it (wait4's rusage), so a child can be compared with work done in-process.
package enum ChildProcess {
    package struct Outcome: Sendable {
        package var exitStatus: Int32
        package var wallNanoseconds: UInt64
        package var cpu: CPUTime
    }

    package enum Failure: Error, CustomStringConvertible {
        case cannotStart(program: String, errno: Int32)
        case failed(program: String, status: Int32, stderrTail: String)

        package var description: String {
            switch self {
            case .cannotStart(let program, let code):
                "cannot start \(program): \(String(cString: strerror(code)))"
            case .failed(let program, let status, let tail):
                "\(program) exited with status \(status)" + (tail.isEmpty ? "" : ": \(tail)")
            }
        }
    }

    /// Runs `arguments[0]` (looked up on PATH) with `environment` added to ours, stdout and stderr
    /// written to the given files (or /dev/null). Blocks a dedicated thread, not the caller's.
    package static func run(_ arguments: [String], environment: [String: String] = [:],
                           stdoutPath: String = "/dev/null", stderrPath: String = "/dev/null") async throws -> Outcome {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread {
                continuation.resume(with: Result { try runBlocking(arguments, environment: environment,
                                                                    stdoutPath: stdoutPath, stderrPath: stderrPath) })
            }
        }
    }

    private static func runBlocking(_ arguments: [String], environment: [String: String],
                                    stdoutPath: String, stderrPath: String) throws -> Outcome {
        precondition(!arguments.isEmpty, "a program to run")
        var merged = ProcessInfo.processInfo.environment
        for (key, value) in environment { merged[key] = value }
        let argv = arguments.map { strdup($0) } + [nil]
        let envp = merged.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, stdoutPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, stderrPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)

        var pid: pid_t = 0
        let started = MonotonicClock.nanoseconds()
        let spawnResult = posix_spawnp(&pid, arguments[0], &actions, nil, argv, envp)
        guard spawnResult == 0 else { throw Failure.cannotStart(program: arguments[0], errno: spawnResult) }
        var status: Int32 = 0
        var usage = rusage()
        while wait4(pid, &status, 0, &usage) == -1 && errno == EINTR {}
        let wall = MonotonicClock.nanoseconds() - started
        // WIFEXITED / WEXITSTATUS are macros; spelled out: low 7 bits zero means a normal exit.
        let exitStatus: Int32 = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        return Outcome(exitStatus: exitStatus, wallNanoseconds: wall, cpu: CPUTime(usage))
    }

    /// Runs `gst-launch-1.0 -q <description>` through `sh -c "exec …"`: launch text is written for a
    /// shell (caps are double-quoted, and gst-launch re-quotes an argument that holds spaces), and
    /// `exec` keeps a single process, so the rusage is gst-launch-1.0's own. Throws on a non-zero exit.
    package static func gstLaunch(_ description: String, environment: [String: String] = [:], stderrPath: String) async throws -> Outcome {
        let outcome = try await run(["/bin/sh", "-c", "exec gst-launch-1.0 -q " + description], environment: environment,
                                    stderrPath: stderrPath)
        guard outcome.exitStatus == 0 else {
            throw Failure.failed(program: "gst-launch-1.0", status: outcome.exitStatus, stderrTail: tail(of: stderrPath))
        }
        try? FileManager.default.removeItem(atPath: stderrPath)
        return outcome
    }

    /// The last `limit` characters of a text file, for error messages.
    package static func tail(of path: String, limit: Int = 600) -> String {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return "" }
        return String(text.suffix(limit)).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
