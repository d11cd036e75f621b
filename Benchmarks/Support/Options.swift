import Foundation

/// Command-line options of the benchmark programs: `--flag` and `--name value`, nothing else.
package struct Options: Sendable {
    package private(set) var flags: Set<String> = []
    package private(set) var values: [String: String] = [:]
    package private(set) var positional: [String] = []

    /// Parses `arguments`; every option must be in `flags` or `valued`.
    package init(_ arguments: [String], flags allowedFlags: Set<String>, valued: Set<String>) throws {
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            guard argument.hasPrefix("--") else { positional.append(argument); continue }
            let name = String(argument.dropFirst(2))
            if allowedFlags.contains(name) {
                flags.insert(name)
            } else if valued.contains(name) {
                guard index < arguments.count else { throw BenchmarkError.badInput("--\(name) needs a value") }
                values[name] = arguments[index]
                index += 1
            } else {
                throw BenchmarkError.badInput("unknown option \(argument)")
            }
        }
    }

    package func has(_ flag: String) -> Bool { flags.contains(flag) }

    package func int(_ name: String, default fallback: Int, range: ClosedRange<Int>) throws -> Int {
        guard let text = values[name] else { return fallback }
        guard let value = Int(text), range.contains(value) else {
            throw BenchmarkError.badInput("--\(name) must be a whole number in \(range.lowerBound)...\(range.upperBound), got \"\(text)\"")
        }
        return value
    }

    /// A comma-separated list, each item checked against `allowed` (case-insensitive).
    package func list(_ name: String, allowed: [String]) throws -> [String]? {
        guard let text = values[name] else { return nil }
        let items = text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        for item in items where !allowed.contains(item) {
            throw BenchmarkError.badInput("--\(name): unknown \"\(item)\"; choose from \(allowed.joined(separator: ", "))")
        }
        return items
    }
}

/// Where a run writes: the published results, and a work directory for fragments and raw frames.
package struct OutputPaths: Sendable {
    package var results: String
    package var work: String

    /// `--smoke` runs write to a fresh temporary directory so CI never touches `Benchmarks/results`.
    package init(options: Options, smoke: Bool) throws {
        if smoke {
            let base = (NSTemporaryDirectory() as NSString).appendingPathComponent("ecvkit-bench-smoke-\(getpid())")
            results = options.values["results"] ?? (base as NSString).appendingPathComponent("results")
            work = options.values["work"] ?? (base as NSString).appendingPathComponent("work")
        } else {
            let root = FileManager.default.currentDirectoryPath
            let benchmarks = (root as NSString).appendingPathComponent("Benchmarks")
            let base = FileManager.default.fileExists(atPath: benchmarks) ? benchmarks : (root as NSString).appendingPathComponent("ecvkit-benchmarks")
            results = options.values["results"] ?? (base as NSString).appendingPathComponent("results")
            work = options.values["work"] ?? (base as NSString).appendingPathComponent(".work")
        }
        for path in [results, work] {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        }
    }
}
