import ECVRecording
import Foundation
import Testing

// README.md, "Reviewing a recording": the review example, built from the ECVRecording product alone
// and kept word for word as the README prints it (checked below).

/// Reviews a recording as `ecv inspect` does, and draws its pictures beside it; true when it is complete.
func review(_ recording: URL) async throws -> Bool {
    let inspection = try await RecordingInspection.inspect(recording)   // Matroska, WebM or MP4, told by content
    print(inspection.text)                                              // what `ecv inspect` prints (`json`: --json)
    let verdict = inspection.report.verdict                             // the verdict behind its exit status
    if !verdict.isComplete { print("not complete:", verdict.text) }     // e.g. gaps (1, the longest 0.41 s, in caller video)
    let base = recording.deletingPathExtension().path
    try await inspection.writeTimeline(png: URL(fileURLWithPath: base + "-timeline.png"))
    try await ContactSheet.write(inspection, to: URL(fileURLWithPath: base + "-sheet.png"), every: 5)
    return verdict.isComplete
}

@Suite struct RecordingReviewExamples {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The README's block is this file's function, line for line.
    @Test func theReadmePrintsThisExample() throws {
        let readme = try String(contentsOf: Self.root.appendingPathComponent("README.md"), encoding: .utf8)
        let section = try #require(readme.range(of: "In Swift, the same review is the `ECVRecording` product")).upperBound
        let start = try #require(readme.range(of: "```swift\nimport ECVRecording\n\n", range: section..<readme.endIndex)).upperBound
        let end = try #require(readme.range(of: "```", range: start..<readme.endIndex)).lowerBound
        let source = try String(contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8)
        #expect(source.contains(readme[start..<end]), "README's example differs from RecordingReviewExamples.review")
    }

    /// Run on two files made with gst-launch (two parties' VP8 and Opus for 3 s; one party only):
    /// the first is complete, the second not, and both get their pictures.
    @Test func theExampleReviewsACompleteAndAOnePartyRecording() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ecv-review-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        func record(_ name: String, parties: Int) throws -> URL {
            let file = directory.appendingPathComponent(name)
            let party = "videotestsrc num-buffers=90 ! video/x-raw,width=160,height=120,framerate=30/1 ! vp8enc deadline=1 ! mux. "
                + "audiotestsrc num-buffers=150 samplesperbuffer=960 ! audio/x-raw,rate=48000,channels=1 ! opusenc ! mux. "
            let launch = Process()
            launch.executableURL = URL(fileURLWithPath: "/usr/bin/gst-launch-1.0")
            launch.arguments = ["-q"] + ("matroskamux name=mux ! filesink location=\(file.path) " + String(repeating: party, count: parties))
                .split(separator: " ").map(String.init)
            try launch.run()
            launch.waitUntilExit()
            #expect(launch.terminationStatus == 0)
            return file
        }
        let both = try record("both.mkv", parties: 2), one = try record("one.mkv", parties: 1)
        #expect(try await review(both))
        #expect(try await !review(one))
        for name in ["both-timeline.png", "both-sheet.png", "one-timeline.png", "one-sheet.png"] {
            let bytes = try Data(contentsOf: directory.appendingPathComponent(name))
            #expect(bytes.count > 1000 && bytes.prefix(4) == Data([0x89, 0x50, 0x4E, 0x47]), "\(name): a PNG")
        }
    }
}
