import Foundation
import MediaPipeline
import MediaRuntime

/// `ecv inspect`: what a recording holds, for a reviewer, before pressing play. The container is
/// told by the file's first bytes, not its name, and the exit status is the verdict's.
enum InspectCommand {
    static let usage = """
        ecv inspect FILE [options]  review a recording: tracks, chapters, stats, gaps and a verdict
                                 (Matroska, WebM or MP4, told by content; also a file cut short by a crash)
          --json                   the report as JSON
          --svg OUT.svg            the timeline picture (lanes, gaps, chapters, bitrate and loss)
          --png OUT.png            the same timeline as PNG
          --sheet OUT.png          a contact sheet of every video track, side by side
          --every SECONDS          the contact sheet's interval (default: about ten rows)
          Exits 0 when the verdict is complete, 1 for any other verdict (cut short, a party missing, gaps,
          sparse: a track with far fewer frames or packets than its span needs) or a file that is no recording.
        """

    static let spec = OptionSpec(values: ["svg", "png", "sheet", "every"], flags: ["json"])

    static func run(_ words: [String]) async throws(CLIError) {
        var arguments = try Arguments(words, spec)
        let json = arguments.flag("json")
        let svg = arguments.path("svg").map { URL(fileURLWithPath: $0) }
        let png = arguments.path("png").map { URL(fileURLWithPath: $0) }
        let sheet = arguments.path("sheet").map { URL(fileURLWithPath: $0) }
        let every = try arguments.positive("every")
        if every != nil && sheet == nil { throw .usage("--every needs --sheet OUT.png") }
        try arguments.finish()
        guard arguments.positional.count == 1, let path = arguments.positional.first else {
            throw .usage("inspect takes one recording file (ecv inspect --help)")
        }
        let url = URL(fileURLWithPath: Arguments.absolute(path))
        let container = try RecordingContainer.detect(url)
        let view = try container.readableView(of: url)
        defer { view.remove() }
        let verdict: InspectVerdict
        do throws(RecordingError) {
            let inspection = try await RecordingInspection.inspect(view.url)
            verdict = InspectVerdict(inspection.report)
            say(json ? verdict.json(inspection.json, file: url) : verdict.text(inspection.text, name: url.lastPathComponent, shownAs: view.url))
            if svg != nil || png != nil {
                try await inspection.writeTimeline(svg: svg, png: png)
                for written in [svg, png].compactMap({ $0 }) { printErr("timeline: \(written.path)") }
            }
            if let sheet {
                let layout = try await ContactSheet.write(inspection, to: sheet, every: every)
                printErr("contact sheet: \(sheet.path) (\(layout.times.count) rows every \(layout.interval) s, \(layout.width)x\(layout.height))")
            }
        } catch {
            throw .failed("\(error)")
        }
        if !verdict.isComplete { throw .failed("\(url.lastPathComponent): \(verdict.summary)") }
    }
}

/// A recording's container, told by its first bytes: Matroska's EBML header (WebM is Matroska
/// with another DocType) or an ISO BMFF box (`ftyp`, `moov`, `moof`, `styp`).
enum RecordingContainer {
    case matroska
    case mp4

    static func detect(_ url: URL) throws(CLIError) -> RecordingContainer {
        guard let handle = FileHandle(forReadingAtPath: url.path) else { throw .failed("cannot read \(url.path): no such readable file") }
        defer { try? handle.close() } // read-only: closing cannot lose anything
        let head: [UInt8]
        do { head = [UInt8](try handle.read(upToCount: 12) ?? Data()) } catch {
            throw .failed("cannot read \(url.path): \(error.localizedDescription)")
        }
        if head.isEmpty { throw .failed("\(url.lastPathComponent) is empty (0 bytes): no recording was written to it") }
        if head.starts(with: [0x1A, 0x45, 0xDF, 0xA3]) { return .matroska }
        if head.count >= 8, ["ftyp", "moov", "moof", "styp", "free", "mdat"].contains(String(decoding: head[4..<8], as: UTF8.self)) {
            return .mp4
        }
        throw .failed("\(url.lastPathComponent) is not a recording: its first bytes are neither Matroska/WebM nor MP4")
    }

    /// The extension the inspector reads this container by.
    var fileExtension: String { self == .mp4 ? "mp4" : "mkv" }

    /// The file under a name whose extension matches its content: itself when it does, else a
    /// hard link (the same file, so its size and bytes are the file's) in a private folder, with
    /// links to its sidecars, so a Matroska file named `.mp4` is read as Matroska. The folder is
    /// made in the temporary directory, else beside the file (a hard link cannot cross file
    /// systems); where neither works, a symbolic link is used.
    func readableView(of url: URL) throws(CLIError) -> RecordingView {
        let named = url.pathExtension.lowercased() == "mp4" ? RecordingContainer.mp4 : .matroska
        if named == self { return RecordingView(url: url, folder: nil) }
        let name = url.deletingPathExtension().lastPathComponent + "." + fileExtension
        let tag = "ecv-inspect-\(UUID().uuidString.prefix(8))"
        let temporary = FileManager.default.temporaryDirectory.appendingPathComponent(tag)
        let attempts = [(temporary, false), (url.deletingLastPathComponent().appendingPathComponent("." + tag), false), (temporary, true)]
        var lastProblem = ""
        for (folder, symbolic) in attempts {
            let link = folder.appendingPathComponent(name)
            do {
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: false)
                if symbolic {
                    try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: url.path)
                } else {
                    try FileManager.default.linkItem(atPath: url.path, toPath: link.path)
                }
                for sidecar in [".chapters.json", ".stats.ndjson"] where FileManager.default.fileExists(atPath: url.path + sidecar) {
                    try FileManager.default.createSymbolicLink(atPath: link.path + sidecar, withDestinationPath: url.path + sidecar)
                }
                return RecordingView(url: link, folder: folder)
            } catch {
                lastProblem = error.localizedDescription
                RecordingView(url: link, folder: folder).remove()
            }
        }
        throw .failed("cannot prepare \(url.lastPathComponent) for reading as \(self): \(lastProblem)")
    }
}

/// Where the inspector reads a recording, and the private folder to remove afterwards.
struct RecordingView {
    let url: URL
    let folder: URL?

    func remove() {
        guard let folder else { return }
        // Links only, in a folder of our own: a leftover is harmless and the run's result stands.
        try? FileManager.default.removeItem(at: folder)
    }
}
