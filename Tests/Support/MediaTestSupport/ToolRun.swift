import Foundation

/// Runs a command-line tool (`tool`: its path) and returns its standard output; throws with its
/// error output when it exits non-zero. For tools whose output is a few lines (both pipes are
/// read to their end before waiting).
@discardableResult
package func runTool(_ tool: String, _ arguments: [String], in directory: URL? = nil) throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: tool)
    process.arguments = arguments
    if let directory { process.currentDirectoryURL = directory }
    let output = Pipe(), errors = Pipe()
    process.standardOutput = output
    process.standardError = errors
    try process.run()
    let printed = output.fileHandleForReading.readDataToEndOfFile()
    let complaint = errors.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else {
        throw TestFailure("\(tool) \(arguments.joined(separator: " ")): \(String(decoding: complaint, as: UTF8.self))")
    }
    return String(decoding: printed, as: UTF8.self)
}
