import ECV
import Foundation
import MediaRuntime

/// Where `--record` writes, checked before anything is dialed: the folder exists and is
/// writable, the file is absent (unless `--overwrite`), and the container, chosen by the file's
/// extension, can hold the codec the call sends. A run that asked for a recording and did not
/// get one fails (exit 1), so nothing claims a file that was never written.
struct RecordingTarget: Sendable {
    /// Absolute.
    let path: String
    let format: RecordingFormat
    let overwrite: Bool

    static let extensions: [String: RecordingFormat] = ["mkv": .matroska, "webm": .webm, "mp4": .mp4]
    private static let names: [RecordingFormat: String] = [.matroska: "Matroska", .webm: "WebM", .mp4: "MP4"]

    /// `--record FILE`: `codecs` are the video codecs the call may negotiate (the recording holds
    /// the one it does); `composite` for a picture-in-picture recording (re-encoded to VP8).
    static func file(_ path: String, overwrite: Bool, codecs: [String], composite: Bool = false) throws(CLIError) -> RecordingTarget {
        let url = URL(fileURLWithPath: path)
        guard let format = extensions[url.pathExtension.lowercased()] else {
            throw .usage("--record \(url.lastPathComponent): the container is chosen by the extension; end the name in .mkv, .webm or .mp4")
        }
        let recorded = (composite ? ["VP8"] : codecs).compactMap { RecordedCodec(rawValue: $0.uppercased()) }
        if let misfit = recorded.first(where: { !format.supportedCodecs.contains($0) }) {
            let name = names[format] ?? format.rawValue
            let holding = extensions.filter { $0.value.supportedCodecs.contains(misfit) }.keys.sorted().map { "." + $0 }.joined(separator: " or ")
            let fitting = recorded.filter(format.supportedCodecs.contains).map(\.rawValue)
            let why = composite ? "a picture-in-picture recording is VP8"
                : recorded.first == misfit ? "the call sends \(misfit.rawValue) (--codec)"
                : "the far end may choose it (the call can negotiate \(recorded.map(\.rawValue).joined(separator: ", ")))"
            throw .usage("--record \(url.lastPathComponent): \(name) cannot hold \(misfit.rawValue), and \(why); use \(holding)"
                + (composite || fitting.isEmpty ? "" : ", or allow only what \(name) holds: --codec \(fitting.joined(separator: ","))"))
        }
        let folder = url.deletingLastPathComponent().path
        try writableFolder(folder, for: path)
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) {
            if isDirectory.boolValue { throw .usage("--record \(path) is a directory; give a file name") }
            if !overwrite { throw .usage("--record \(path) already exists; pass --overwrite to replace it") }
        }
        return RecordingTarget(path: path, format: format, overwrite: overwrite)
    }

    /// `--record DIR` (one file per call inside): DIR exists, or is made when its parent does.
    static func directory(_ path: String) throws(CLIError) {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else { throw .usage("--record \(path) is a file; give a directory") }
            try writableFolder(path, for: path)
            return
        }
        let parent = URL(fileURLWithPath: path).deletingLastPathComponent().path
        try writableFolder(parent, for: path)
        do { try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false) } catch {
            throw .failed("--record: cannot create the directory \(path): \(error.localizedDescription)")
        }
    }

    private static func writableFolder(_ folder: String, for path: String) throws(CLIError) {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: folder, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw .usage("--record \(path): there is no directory \(folder); create it first")
        }
        guard access(folder, W_OK | X_OK) == 0 else { throw .usage("--record \(path): the directory \(folder) is not writable") }
    }

    /// With `--overwrite`: the old file and its sidecars go, right before the new recording
    /// starts (a call that never connects leaves them as they were).
    func clearOldFile() throws(CLIError) {
        guard overwrite else { return }
        for file in [path, path + ".stats.ndjson", path + ".chapters.json"] where FileManager.default.fileExists(atPath: file) {
            do { try FileManager.default.removeItem(atPath: file) } catch {
                throw .failed("--overwrite: cannot remove \(file): \(error.localizedDescription)")
            }
        }
    }

    /// The same target for another file (a transferred call's next leg).
    func at(_ other: String) -> RecordingTarget { RecordingTarget(path: other, format: format, overwrite: overwrite) }

    /// Whether something was written: the file exists and is not empty.
    var written: Bool { Self.written(path) }

    static func written(_ path: String) -> Bool {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: path) else { return false } // absent: not written
        return ((attributes[.size] as? NSNumber)?.intValue ?? 0) > 0
    }
}
