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
}
