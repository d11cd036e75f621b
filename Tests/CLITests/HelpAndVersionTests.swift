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
