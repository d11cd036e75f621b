import Foundation
import GLibCore
import GStreamer

/// `ecv`: the ECVKit command line. Every subcommand with its usage and options, in the order
/// `ecv --help` lists them; `ecv COMMAND --help` prints the command's own entry, so no command
/// lacks one, and completion and the manual page are made from the same list.
let commands: [CommandEntry] = [
    CommandEntry("demo", DemoCommand.usage, DemoCommand.spec), CommandEntry("serve", ServeCommand.usage, ServeCommand.spec),
    CommandEntry("agent", AgentCommand.usage, AgentCommand.spec), CommandEntry("call", CallCommand.usage, CallCommand.spec),
    CommandEntry("kyc", KycCommand.usage, KycCommand.spec), CommandEntry("peer", PeerCommand.usage, PeerCommand.spec),
    CommandEntry("inspect", InspectCommand.usage, InspectCommand.spec), CommandEntry("pipeline", PipelineCommand.usage, PipelineCommand.spec),
    CommandEntry("doctor", DoctorCommand.usage, DoctorCommand.spec), CommandEntry("env", EnvCommand.usage, EnvCommand.spec),
    CommandEntry("completion", HelpDocuments.completionUsage, OptionSpec()), CommandEntry("manual", HelpDocuments.manualUsage, OptionSpec()),
]

// Before any thread starts: a couple of malloc arenas per core instead of glibc's eight, so the
// memory each call's media threads free is not spread over arenas it never leaves
// (ProcessMemory; Tests/CLITests/AgentMemoryTests.swift).
ProcessMemory.limitArenas(to: 2 * ProcessInfo.processInfo.activeProcessorCount)

let words = Array(CommandLine.arguments.dropFirst())
let command = words.first ?? "help"
let rest = Array(words.dropFirst())
let options = rest.prefix { $0 != "--" }

if let help = commands.first(where: { $0.name == command })?.usage, options.contains("--help") || options.contains("-h") {
    print(help)
    exit(ExitCode.success)
}

if command == "--version" || command == "-V" {
    print(ECVVersion.report)
    exit(ExitCode.success)
}

do throws(CLIError) {
    switch command {
    case "demo": try await DemoCommand.run(rest)
    case "serve": try await ServeCommand.run(rest)
    case "agent": try await AgentCommand.run(rest)
    case "call": try await CallCommand.run(rest)
    case "kyc": try await KycCommand.run(rest)
    case "peer": try await PeerCommand.run(rest)
    case "inspect": try await InspectCommand.run(rest)
    case "pipeline": try PipelineCommand.run(rest)
    case "doctor": try await DoctorCommand.run(rest)
    case "env": try EnvCommand.run(rest)
    case "completion": try HelpDocuments.completion(rest)
    case "manual": try HelpDocuments.manual(rest)
    case "help", "--help", "-h": print(HelpDocuments.overview)
    default:
        let suggestion = commands.map(\.name).min { OptionSpec.editDistance($0, command) < OptionSpec.editDistance($1, command) }
            .flatMap { OptionSpec.editDistance($0, command) <= 2 ? " (did you mean '\($0)'?)" : nil } ?? ""
        printErr("ecv: unknown command '\(command)'\(suggestion); `ecv --help` lists the commands")
        exit(ExitCode.usage)
    }
} catch {
    printErr("ecv \(command): \(error)")
    if case .usage = error { exit(ExitCode.usage) }
    exit(ExitCode.failed)
}
