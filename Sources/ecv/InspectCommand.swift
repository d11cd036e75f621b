import Foundation
import MediaRuntime

/// `ecv inspect`: what a recording holds, for a reviewer, before pressing play.
enum InspectCommand {
    static let usage = """
        ecv inspect FILE [options]  review a recording: tracks, chapters, stats, gaps and a verdict
                                 (Matroska, WebM or MP4; also a file cut short by a crash)
          --json                   the report as JSON
          --svg OUT.svg            the timeline picture (lanes, gaps, chapters, bitrate and loss)
          --png OUT.png            the same timeline as PNG
          --sheet OUT.png          a contact sheet of every video track, side by side
          --every SECONDS          the contact sheet's interval (default: about ten rows)
          Exits 0 when the verdict is complete, 1 for any other verdict or a file that cannot be read.
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
            throw .usage("inspect takes one recording file\n\n\(usage)")
        }
        let url = URL(fileURLWithPath: path)
        guard ["mkv", "webm", "mp4"].contains(url.pathExtension.lowercased()) else {
            throw .usage("inspect reads .mkv, .webm or .mp4 files, not '\(url.lastPathComponent)'")
        }
        do throws(RecordingError) {
            let inspection = try await RecordingInspection.inspect(url)
            say(json ? inspection.json : inspection.text)
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
    }
}
