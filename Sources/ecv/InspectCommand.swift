import ECVRecording
import Foundation

/// `ecv inspect`: what a recording holds, for a reviewer, before pressing play. The inspection and
/// its verdict are ECVRecording's (the container told by the file's first bytes, not its name);
/// this prints them, and the exit status is the verdict's.
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
        // The library reports an empty file (a recorder killed before it wrote anything); on the
        // command line it is the one-line failure a script greps for, with nothing on stdout.
        if let size = (try? FileManager.default.attributesOfItem(atPath: url.path))?[.size] as? Int, size == 0 { // unreadable: inspect says why
            throw .failed("\(url.lastPathComponent) is empty (0 bytes): no recording was written to it")
        }
        let verdict: RecordingReport.Verdict
        do throws(RecordingReviewError) {
            let inspection = try await RecordingInspection.inspect(url)
            verdict = inspection.report.verdict
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
        if !verdict.isComplete { throw .failed("\(url.lastPathComponent): \(verdict.text)") }
    }
}
