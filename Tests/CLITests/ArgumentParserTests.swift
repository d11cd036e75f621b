import Foundation
import Testing

/// The parser a script can trust: an unknown option is an error with a suggestion and never takes
/// the next word; an option that needs a value never takes another option; errors name the option
/// typed; contradictions are refused; paths are made absolute; bad usage exits 2 with one line on
/// stderr and nothing on stdout. Every case runs the real `ecv` (no service is reached: each fails
/// while its arguments are read).
@Suite struct ArgumentParserTests {
    struct Case: Sendable, CustomStringConvertible {
        let arguments: [String]
        /// What the one error line must say.
        let says: [String]
        /// What it must not say (the swallowed option's complaint, a Swift field name).
        var never: [String] = []
        var description: String { arguments.joined(separator: " ") }
    }

    static let service = "http://127.0.0.1:9"

    static let cases: [Case] = [
        Case(arguments: ["call", "--stat", "--service-url", service], says: ["unknown option --stat", "did you mean --stats?"],
             never: ["give --service-url"]),
        Case(arguments: ["call", "--service-url", "--json"], says: ["--service-url needs a value", "--json"]),
        Case(arguments: ["agent", "--service-url", service, "--recieve-only"], says: ["unknown option --recieve-only", "--receive-only"]),
        Case(arguments: ["call", "--service-url", service, "-x"], says: ["unknown option -x"]),
        Case(arguments: ["call", "--service-url", service, "--bitrate", "999999"], says: ["--bitrate 999999"], never: ["videoMaxBitrate"]),
        Case(arguments: ["call", "--service-url", service, "--fps", "500"], says: ["--fps 500"], never: ["videoFps"]),
        Case(arguments: ["call", "--service-url", service, "--audio-bitrate", "1"], says: ["--audio-bitrate 1"], never: ["audioStartBitrate"]),
        Case(arguments: ["call", "--service-url", service, "--codec", "AV2"], says: ["--codec", "AV2"]),
        Case(arguments: ["call", "--service-url", service, "--duration", "0"], says: ["--duration takes a number above 0"]),
        Case(arguments: ["call", "--service-url", service, "--json=yes"], says: ["--json takes no value"]),
        Case(arguments: ["pipeline", "--width", "320", "--width", "640"], says: ["--width given 2 times"]),
        Case(arguments: ["serve", "--open-agents", "--agent-secret", "x"], says: ["--open-agents and --agent-secret exclude each other"]),
        Case(arguments: ["serve", "--open-agents", "--turn-username", "u"], says: ["--turn-username", "turn:"]),
        Case(arguments: ["call", "--service-url", service, "-v", "-q"], says: ["-v and -q exclude each other"]),
        Case(arguments: ["call", "--service-url", service, "--log-level", "loud"], says: ["--log-level takes error, warn, info or debug"]),
        Case(arguments: ["agent", "--service-url", service, "--receive-only", "--source", "ball"], says: ["--receive-only and --source"]),
        Case(arguments: ["peer", "--server", service, "--key", "k", "--list", "--call", "bob"], says: ["--list and --call"]),
        Case(arguments: ["demo", "--kyc", "--peer"], says: ["--kyc and --peer"]),
        Case(arguments: ["inspect", "x.mkv", "--every", "2"], says: ["--every needs --sheet"]),
        Case(arguments: ["call", "--service-url", service, "--overwrite"], says: ["--overwrite needs --record"]),
        Case(arguments: ["doctor", "--pin", "sha256/x"], says: ["--pin needs --service-url"]),
        Case(arguments: ["cal"], says: ["unknown command 'cal'", "did you mean 'call'?"]),
        Case(arguments: ["env", "frobnicate"], says: ["unknown action 'frobnicate'"]),
    ]

    @Test(arguments: cases) func badUsageExitsTwoWithOneLineNamingTheOption(_ usage: Case) async throws {
        let result = try await ECVProcess.run(usage.arguments, timeout: .seconds(30))
        #expect(result.status == 2, "\(usage): exit \(result.status), \(result.stderr)")
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.count == 1, "\(usage): one line: \(result.stderr)")
        for text in usage.says { #expect(result.stderr.contains(text), "\(usage): '\(text)' in \(result.stderr)") }
        for text in usage.never { #expect(!result.stderr.contains(text), "\(usage): no '\(text)' in \(result.stderr)") }
        #expect(result.stdout.isEmpty, "\(usage): nothing on stdout: \(result.stdout)")
    }

    /// A relative path is made absolute against the current directory before it reaches GLib.
    @Test func relativePathsAreResolvedAgainstTheCurrentDirectory() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ecv-relative-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let result = try await ECVProcess.run(["call", "--service-url", "https://127.0.0.1:9", "--ca-file", "missing.pem"], directory: directory)
        #expect(result.status == 2, "\(result.stderr)")
        #expect(result.stderr.contains(directory.appendingPathComponent("missing.pem").standardizedFileURL.path), "\(result.stderr)")
        #expect(!result.stderr.contains("GLib"), "\(result.stderr)")
    }

    /// Every option a command's help names is one its parser accepts, and the other way round
    /// (the completion script lists what the parser accepts), so help, completion and parser agree.
    @Test func helpCompletionAndParserNameTheSameOptions() async throws {
        let completion = try await ECVProcess.run(["completion", "bash"])
        #expect(completion.status == 0, "\(completion.stderr)")
        var accepted: [String: Set<String>] = [:]
        for match in completion.stdout.matches(of: /\n\s+([a-z]+)\) options="([^"]*)"/) {
            accepted[String(match.1)] = Set(match.2.split(separator: " ").map(String.init).filter { $0.hasPrefix("--") && $0 != "--help" })
        }
        #expect(accepted.count >= 10, "\(completion.stdout)")
        for (command, options) in accepted {
            let help = try await ECVProcess.run([command, "--help"])
            let named = Set(help.stdout.matches(of: /--[a-z0-9][a-z0-9-]*/).map { String($0.0) }).subtracting(["--help"])
            #expect(named == options, "ecv \(command): in the help only \(named.subtracting(options).sorted()), accepted only \(options.subtracting(named).sorted())")
        }
    }

    @Test func helpListsTheExitCodes() async throws {
        let help = try await ECVProcess.run(["--help"])
        for line in ["0   success", "1   the job failed", "2   bad usage"] { #expect(help.stdout.contains(line), "\(help.stdout)") }
    }
}
