import Foundation
import PackagePlugin

/// Gives the `ecv` target the git commit it is built from, for `ecv --version`: before every build,
/// `commit.sh` (beside this file) asks git for the package folder's commit and writes
/// `BuildCommit.swift` when it changed; outside a git checkout (a tarball) the commit is "unknown".
@main
struct BuildCommit: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let output = context.pluginWorkDirectoryURL.appendingPathComponent("Generated")
        let script = context.package.directoryURL.appendingPathComponent("Plugins/BuildCommit/commit.sh")
        return [.prebuildCommand(displayName: "The git commit of \(target.name)", executable: URL(fileURLWithPath: "/bin/sh"),
                                 arguments: [script.path, context.package.directoryURL.path, output.path],
                                 // Read-only git: no index refresh written while another git runs in the checkout.
                                 environment: ["PATH": "/usr/local/bin:/usr/bin:/bin", "GIT_OPTIONAL_LOCKS": "0"],
                                 outputFilesDirectory: output)]
    }
}
