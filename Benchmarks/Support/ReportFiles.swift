import Foundation

/// Reading and writing reports: JSON fragments between programs, and the published set
/// (`<timestamp>.json`, `<timestamp>.md`, `latest.json`, `latest.md`, `latest-encode.svg`).
package enum ReportFiles {
    package static func write(_ report: BenchmarkReport, to path: String) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let url = URL(fileURLWithPath: path)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try encoder.encode(report).write(to: url)
    }

    package static func read(_ path: String) throws -> BenchmarkReport {
        do {
            return try JSONDecoder().decode(BenchmarkReport.self, from: Data(contentsOf: URL(fileURLWithPath: path)))
        } catch {
            throw BenchmarkError.badInput("cannot read the report \(path): \(error)")
        }
    }

    /// What a benchmark program does with its finished report: the JSON fragment when `--fragment`
    /// names one, and unless `--no-publish`, the published set and the Markdown on stdout.
    package static func deliver(_ report: BenchmarkReport, options: Options, paths: OutputPaths) throws {
        if let fragment = options.values["fragment"] {
            try write(report, to: fragment)
            progress("wrote \(fragment)")
        }
        if !options.has("no-publish") {
            for path in try publish(report, in: paths.results) { progress("wrote \(path)") }
            print("")
            print(MarkdownReport.render(report))
        }
    }

    /// Writes the published set into `directory` and returns the paths written. A program whose
    /// results stand apart from the main run's names them with `prefix` (`instructions-`).
    @discardableResult
    package static func publish(_ report: BenchmarkReport, in directory: String, prefix: String = "") throws -> [String] {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMdd'T'HHmmss'Z'"
        let stamp = formatter.string(from: Date())
        let markdown = MarkdownReport.render(report)
        var written: [String] = []
        func put(_ name: String, _ text: String) throws {
            let path = (directory as NSString).appendingPathComponent(name)
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            written.append(path)
        }
        for name in ["\(prefix)\(stamp).json", "\(prefix)latest.json"] {
            let path = (directory as NSString).appendingPathComponent(name)
            try write(report, to: path)
            written.append(path)
        }
        try put("\(prefix)\(stamp).md", markdown)
        try put("\(prefix)latest.md", markdown)
        if let encode = report.encode {
            let title = "ECVKit, \(report.machine.gstreamer), \(report.machine.cpuModel), \(report.machine.cores) cores, \(report.machine.date)"
                + (report.smoke ? " (smoke run: meaningless)" : "")
            try put("latest-encode.svg", EncodeChart.render(encode, title: title))
        }
        return written
    }
}

/// A clear error for the programs to print before exiting non-zero.
package enum BenchmarkError: Error, CustomStringConvertible {
    case badInput(String)
    case failed(String)

    package var description: String {
        switch self {
        case .badInput(let message), .failed(let message): message
        }
    }
}
