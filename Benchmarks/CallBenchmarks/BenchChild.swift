import BenchmarkSupport
import Foundation
import GLibCore

/// A child `bench-call` process (bots or the load generator): its stdout lines, its stdin, its
/// pid, and a stop.
final class BenchChild: Sendable {
    private let process: Process
    private let input: FileHandle
    private let lines = Locked<[String]>([])
    private let name: String
    var pid: Int32 { process.processIdentifier }
    var isRunning: Bool { process.isRunning }

    /// A `bench-call` child, or with `executable` another program speaking the same lines (the
    /// Pion peer, `PionPeer`).
    init(arguments: [String], executable: String? = nil) throws {
        process = Process()
        let program = executable ?? CommandLine.arguments[0]
        name = arguments.first ?? ""
        // A profiler in front of one kind of child: ECV_BENCH_WRAP_COST_AGENTS or ECV_BENCH_WRAP_LOAD
        // ("valgrind --tool=callgrind …"), split at spaces.
        let key = "ECV_BENCH_WRAP_" + (arguments.first ?? "").uppercased().replacingOccurrences(of: "-", with: "_")
        let wrapper = ProcessInfo.processInfo.environment[key]?.split(separator: " ").map(String.init) ?? []
        if let tool = wrapper.first {
            process.executableURL = URL(fileURLWithPath: tool)
            process.arguments = Array(wrapper.dropFirst()) + [program] + arguments
        } else {
            process.executableURL = URL(fileURLWithPath: program)
            process.arguments = arguments
        }
        let output = Pipe(), commands = Pipe()
        process.standardOutput = output
        process.standardInput = commands
        input = commands.fileHandleForWriting
        let lines = self.lines
        let reader = output.fileHandleForReading
        // A thread of its own reading until end of file (not a readability handler: several
        // children's dispatch sources crashed Foundation's event loop here). A line may arrive in
        // two reads: the unfinished tail waits for its newline.
        let thread = Thread {
            var tail = ""
            while case let data = reader.availableData, !data.isEmpty {
                tail += String(decoding: data, as: UTF8.self)
                var parts = tail.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
                tail = parts.removeLast()
                lines.withLock { $0 += parts }
            }
        }
        thread.start()
        try process.run()
    }

    /// The last line that starts with `prefix`, without it.
    func last(_ prefix: String) -> String? {
        lines.value.last { $0.hasPrefix(prefix) }.map { String($0.dropFirst(prefix.count)) }
    }

    /// Every line so far that starts with `prefix`, without it.
    func all(_ prefix: String) -> [String] {
        lines.value.filter { $0.hasPrefix(prefix) }.map { String($0.dropFirst(prefix.count)) }
    }

    /// The numbers of the last status line (`connected 3 recording 2` → ["connected": 3, "recording": 2]).
    var status: [String: Int] {
        guard let line = lines.value.last(where: { $0.hasPrefix("connected ") }) else { return [:] }
        let words = line.split(separator: " ")
        return Dictionary(stride(from: 0, to: words.count - 1, by: 2).compactMap { index in
            Int(words[index + 1]).map { (String(words[index]), $0) }
        }, uniquingKeysWith: { $1 })
    }

    func send(_ command: String) { input.write(Data((command + "\n").utf8)) }

    /// Waits until a line starting with `prefix` has come; throws if the child ends or time runs out.
    @discardableResult
    func waitFor(_ prefix: String, timeout: Duration) async throws -> String {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let line = last(prefix) { return line }
            guard process.isRunning, ContinuousClock.now < deadline else {
                throw BenchmarkError.badInput("the child \(name) did not print \(prefix)")
            }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    func stop() {
        if process.isRunning { process.terminate() }
    }
}

/// CPU time, resident memory, threads and open descriptors of a process, from /proc.
enum ProcStat {
    static func cpuSeconds(_ pid: Int32) -> Double { cpuSeconds(statPath: "/proc/\(pid)/stat") }

    private static func cpuSeconds(statPath: String) -> Double {
        guard let text = try? String(contentsOfFile: statPath, encoding: .utf8), // why: a gone process or thread has used nothing more
              let close = text.lastIndex(of: ")") else { return 0 }
        let fields = text[text.index(after: close)...].split(separator: " ")
        // After the command: state is field 3, so utime (14) and stime (15) are at 11 and 12.
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// CPU seconds so far of each of the process's threads, summed by kind: the thread's name with
    /// its digits as `#` (`nicesrc12:src` and `nicesrc3:src` are both `nicesrc#:src`).
    static func cpuSecondsByThread(_ pid: Int32) -> [String: Double] {
        // why: a gone process has no threads
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        var kinds: [String: Double] = [:]
        for task in tasks {
            guard let name = try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/comm", encoding: .utf8) else { continue } // why: the thread ended
            let kind = String(name.trimmingCharacters(in: .whitespacesAndNewlines).map { $0.isNumber ? "#" : $0 })
                .replacingOccurrences(of: "##", with: "#").replacingOccurrences(of: "##", with: "#")
            kinds[kind, default: 0] += cpuSeconds(statPath: "/proc/\(pid)/task/\(task)/stat")
        }
        return kinds
    }

    /// RSS, threads and descriptors summed over `pids`.
    static func footprint(_ pids: [Int32]) -> (rss: Double, threads: Double, fds: Double) {
        (pids.map(rssMiB).reduce(0, +), pids.map(threads).reduce(0, +), pids.map(descriptors).reduce(0, +))
    }

    /// The machine's 1-minute load average (0 when /proc has none).
    static func loadAverage() -> Double {
        // why: no /proc/loadavg reads as no figure, not a failed benchmark
        guard let text = try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8) else { return 0 }
        return text.split(separator: " ").first.flatMap { Double($0) } ?? 0
    }

    static func rssMiB(_ pid: Int32) -> Double { status(pid, "VmRSS:") / 1024 }
    static func threads(_ pid: Int32) -> Double { status(pid, "Threads:") }

    static func descriptors(_ pid: Int32) -> Double {
        // why: a gone process holds none
        Double((try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd"))?.count ?? 0)
    }

    private static func status(_ pid: Int32, _ key: String) -> Double {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8), // why: a gone process has none
              let line = text.split(separator: "\n").first(where: { $0.hasPrefix(key) }),
              let value = Double(line.split(whereSeparator: { $0 == " " || $0 == "\t" })[1]) else { return 0 }
        return value
    }
}
