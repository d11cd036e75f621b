import Foundation

/// The package's own executables (`ecv`, `bench-call` …) sit next to the test bundle in
/// `.build/<config>/`: found from the running test binary, so tests run what was just built.
package enum BuiltExecutable {
    package static func url(named name: String) -> URL {
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        while !FileManager.default.fileExists(atPath: directory.appendingPathComponent(name).path), directory.path != "/" {
            directory.deleteLastPathComponent()
        }
        return directory.appendingPathComponent(name)
    }
}
