import Foundation
import GStreamer
import Testing

/// `ecv --version` and `--help`/`-h` on every subcommand: what a script or a newcomer tries first.
@Suite struct HelpAndVersionTests {
    @Test(arguments: ["--version", "-V"]) func versionNamesEcvGStreamerAndSwift(_ flag: String) async throws {
        let result = try await ECVProcess.run([flag], timeout: .seconds(30))
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first?.wholeMatch(of: /ecv \d+\.\d+\.\d+/) != nil, "\(result.stdout)")
        try GStreamerRuntime.ensureInitialized()
        #expect(lines.contains(GStreamerRuntime.versionString), "\(result.stdout)")
        #expect(lines.contains { $0.hasPrefix("Swift 6.") || $0.hasPrefix("Swift 7.") }, "\(result.stdout)")
        #expect(result.stderr.isEmpty, "\(result.stderr)")
        // The second line: the commit this checkout's build was made from (Plugins/BuildCommit).
        let head = try shell("git -C '\(Self.root.path)' rev-parse --short=12 HEAD").trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(lines.count > 1 && lines[1].wholeMatch(of: /commit [0-9a-f]{12}(-dirty)?/) != nil && lines[1].hasPrefix("commit " + head),
                "HEAD \(head): \(result.stdout)")
    }

    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Built from a tarball (no git checkout) or from a folder inside another repository, the
    /// build's commit is "unknown": the plugin's script, run as the build runs it.
    @Test func theCommitIsUnknownOutsideAGitCheckout() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ecv-commit-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: directory) }
        let script = Self.root.appendingPathComponent("Plugins/BuildCommit/commit.sh").path
        func commit(of package: String) throws -> String {
            let out = directory.appendingPathComponent("out-\(UUID().uuidString.prefix(8))").path
            _ = try shell("sh '\(script)' '\(package)' '\(out)'")
            return try String(contentsOfFile: out + "/BuildCommit.swift", encoding: .utf8)
        }
        let unpacked = directory.appendingPathComponent("ECVKit-0.3.0")
        try FileManager.default.createDirectory(at: unpacked, withIntermediateDirectories: true)
        #expect(try commit(of: unpacked.path).contains(#"static let commit = "unknown""#))
        _ = try shell("git init -q '\(directory.path)'")
        #expect(try commit(of: unpacked.path).contains(#"static let commit = "unknown""#), "a folder inside another repository")
        #expect(try commit(of: Self.root.path).contains(#"static let commit = ""#) && !commit(of: Self.root.path).contains("unknown"))
    }

    /// Every subcommand the top-level help lists answers `--help` and `-h` with its own usage, exit 0.
    @Test func everySubcommandAnswersHelp() async throws {
        let overview = try await ECVProcess.run(["--help"], timeout: .seconds(30))
        #expect(overview.status == 0)
        var subcommands: [String] = []
        for line in overview.stdout.split(separator: "\n") {
            if let match = line.firstMatch(of: /^ecv ([a-z]+)/), !subcommands.contains(String(match.1)) { subcommands.append(String(match.1)) }
        }
        #expect(subcommands.count >= 10, "\(subcommands)")
        for subcommand in subcommands {
            for flag in ["--help", "-h"] {
                let result = try await ECVProcess.run([subcommand, flag], timeout: .seconds(30))
                #expect(result.status == 0, "ecv \(subcommand) \(flag): \(result.stderr)")
                #expect(result.stdout.hasPrefix("ecv \(subcommand)"), "ecv \(subcommand) \(flag): \(result.stdout)")
                #expect(result.stderr.isEmpty, "ecv \(subcommand) \(flag): \(result.stderr)")
            }
        }
        let afterOptions = try await ECVProcess.run(["inspect", "recording.mkv", "--json", "--help"], timeout: .seconds(30))
        #expect(afterOptions.status == 0 && afterOptions.stdout.hasPrefix("ecv inspect"), "\(afterOptions.stderr)")
    }
}
