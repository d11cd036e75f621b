import Foundation
import GLibCore
import GStreamer

/// `ecv`: the ECVKit command line. Subcommands: demo, serve, agent, call, kyc, inspect, pipeline, doctor, env.
let usage = """
    ecv — headless ECV video calls on GStreamer

    \(DemoCommand.usage)
    \(ServeCommand.usage)
    \(AgentCommand.usage)
    \(CallCommand.usage)
    \(KycCommand.usage)
    \(PeerCommand.usage)
    \(InspectCommand.usage)
    \(PipelineCommand.usage)
    \(DoctorCommand.usage)
    \(EnvCommand.usage)
    ecv --version, -V        the versions of ecv, GStreamer and Swift
    """

// Before any thread starts: a couple of malloc arenas per core instead of glibc's eight, so the
// memory each call's media threads free is not spread over arenas it never leaves
// (ProcessMemory; Tests/CLITests/AgentMemoryTests.swift).
ProcessMemory.limitArenas(to: 2 * ProcessInfo.processInfo.activeProcessorCount)

let words = Array(CommandLine.arguments.dropFirst())
let command = words.first ?? "help"
let rest = Array(words.dropFirst())

/// Each subcommand's own usage, printed for `ecv <command> --help` (or `-h`).
let commandUsage: [String: String] = [
    "demo": DemoCommand.usage, "serve": ServeCommand.usage, "agent": AgentCommand.usage, "call": CallCommand.usage, "kyc": KycCommand.usage, "peer": PeerCommand.usage,
    "pipeline": PipelineCommand.usage, "doctor": DoctorCommand.usage, "env": EnvCommand.usage,
]
if let help = commandUsage[command], rest.contains("--help") || rest.contains("-h") {
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
