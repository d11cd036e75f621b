import Foundation
import GLibCore
import GStreamer

/// `ecv`: the ECVKit command line. Every subcommand with its usage, in the order `ecv --help`
/// lists them; `ecv COMMAND --help` prints the command's own entry, so no command lacks one.
let commands: [(name: String, usage: String)] = [
    ("demo", DemoCommand.usage), ("serve", ServeCommand.usage), ("agent", AgentCommand.usage), ("call", CallCommand.usage),
    ("kyc", KycCommand.usage), ("peer", PeerCommand.usage), ("inspect", InspectCommand.usage), ("pipeline", PipelineCommand.usage),
    ("doctor", DoctorCommand.usage), ("env", EnvCommand.usage),
]

let usage = """
    ecv — headless ECV video calls on GStreamer

    \(commands.map(\.usage).joined(separator: "\n"))
    ecv COMMAND --help, -h   that command's options
    ecv --version, -V        the versions of ecv, GStreamer and Swift
    """

// Before any thread starts: a couple of malloc arenas per core instead of glibc's eight, so the
// memory each call's media threads free is not spread over arenas it never leaves
// (ProcessMemory; Tests/CLITests/AgentMemoryTests.swift).
ProcessMemory.limitArenas(to: 2 * ProcessInfo.processInfo.activeProcessorCount)

let words = Array(CommandLine.arguments.dropFirst())
let command = words.first ?? "help"
let rest = Array(words.dropFirst())

if let help = commands.first(where: { $0.name == command })?.usage, rest.contains("--help") || rest.contains("-h") {
    print(help)
    exit(0)
}

if command == "--version" || command == "-V" {
    print(ECVVersion.report)
    exit(0)
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
    case "doctor": try DoctorCommand.run(rest)
    case "env": try EnvCommand.run(rest)
    case "help", "--help", "-h": print(usage)
    default:
        printErr("ecv: unknown command '\(command)'\n\n\(usage)")
        exit(2)
    }
} catch {
    printErr("ecv \(command): \(error)")
    if case .usage = error { exit(2) }
    exit(1)
}
