import Foundation
import Testing

/// `ecv inspect` as a reviewer runs it: on a file made elsewhere (gst-launch, no ECVKit names or
/// sidecars), and on wrong input, which it names and refuses.
@Suite(.serialized) struct InspectCommandTests {
    @Test func inspectsAFileMadeElsewhereAndDrawsItsTimeline() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ecv-inspect-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("elsewhere.mkv")
        let launch = Process()
        launch.executableURL = URL(fileURLWithPath: "/usr/bin/gst-launch-1.0")
        launch.arguments = ["-q", "videotestsrc", "num-buffers=60", "!", "video/x-raw,width=160,height=120,framerate=30/1", "!",
                            "vp8enc", "deadline=1", "!", "matroskamux", "!", "filesink", "location=\(file.path)"]
        try launch.run()
        launch.waitUntilExit()
        #expect(launch.terminationStatus == 0)

        let png = directory.appendingPathComponent("timeline.png"), svg = directory.appendingPathComponent("timeline.svg")
        let result = try await ECVProcess.run(["inspect", file.path, "--json", "--png", png.path, "--svg", svg.path])
        #expect(result.status == 1 && result.stderr.contains("elsewhere.mkv: a party missing"), "not complete: \(result.stderr)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any], "\(result.stdout)")
        let tracks = try #require(report["tracks"] as? [[String: Any]])
        #expect(tracks.count == 1 && tracks.first?["codec"] as? String == "VP8" && tracks.first?["frames"] as? Int == 60, "\(tracks)")
        #expect(tracks.first?["width"] as? Int == 160)
        let duration = try #require(report["duration"] as? Double)
        #expect(duration > 1.9 && duration < 2.0, "60 frames at 30/s: the last at 1.97 s, not \(duration)")
        let verdict = try #require(report["verdict"] as? [String: Any])
        #expect(verdict["findings"] as? [String] == ["party missing"], "one video track is one party: \(verdict)")
        #expect((report["integrity"] as? [String: Any])?["missing"] as? [String] == [])
        let header = [UInt8](try Data(contentsOf: png).prefix(24))
        #expect(header.count == 24 && Array(header[1...3]) == Array("PNG".utf8) && Array(header[16..<20]) == [0, 0, 0x03, 0xE8],
                "a PNG 1000 pixels wide")
        #expect(try String(contentsOf: svg, encoding: .utf8).contains(#"<g class="lane" data-track="video_0">"#))

        let text = try await ECVProcess.run(["inspect", file.path])
        #expect(text.status == 1 && text.stdout.contains("verdict: a party missing"), "\(text.stdout)")
    }

    @Test func wrongInputIsNamedAndRefused() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ecv-inspect-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let none = try await ECVProcess.run(["inspect"])
        #expect(none.status == 2 && none.stderr.contains("inspect takes one recording file"))
        let notes = directory.appendingPathComponent("notes.mkv")
        try Data("a text file, named as a recording".utf8).write(to: notes)
        let text = try await ECVProcess.run(["inspect", notes.path])
        #expect(text.status == 1 && text.stderr.contains("notes.mkv is not a recording"), "by content: \(text.stderr)")
        let missing = try await ECVProcess.run(["inspect", "/nonexistent/call.mkv"])
        #expect(missing.status == 1 && missing.stderr.contains("cannot read /nonexistent/call.mkv"), "\(missing.stderr)")
        let every = try await ECVProcess.run(["inspect", "x.mkv", "--sheet", "s.png", "--every", "soon"])
        #expect(every.status == 2 && every.stderr.contains("--every takes a number"))
    }

    /// The exit status is the verdict's: 0 only for complete. Files made with gst-launch: two
    /// parties' VP8 and Opus for 3 s; the same with one audio track of a single buffer; the
    /// complete file cut to its first 20 kB, named .mp4, and empty.
    @Test func exitStatusFollowsTheVerdictAndTheContainerIsToldByContent() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ecv-verdicts-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        func record(_ name: String, secondAudioBuffers: Int) throws -> URL {
            let file = directory.appendingPathComponent(name)
            let video = "! video/x-raw,width=160,height=120,framerate=30/1 ! vp8enc deadline=1 ! mux."
            let audio = "samplesperbuffer=960 ! audio/x-raw,rate=48000,channels=1 ! opusenc ! mux."
            try shell("gst-launch-1.0 -q matroskamux name=mux ! filesink location=\(file.path) videotestsrc num-buffers=90 \(video) "
                + "videotestsrc num-buffers=90 pattern=ball \(video) audiotestsrc num-buffers=150 \(audio) "
                + "audiotestsrc num-buffers=\(secondAudioBuffers) \(audio)")
            return file
        }
        let complete = try record("complete.mkv", secondAudioBuffers: 150)
        let sparse = try record("sparse.mkv", secondAudioBuffers: 1)
        let bytes = try Data(contentsOf: complete)
        let cut = directory.appendingPathComponent("cut.mkv"), misnamed = directory.appendingPathComponent("misnamed.mp4")
        let empty = directory.appendingPathComponent("empty.mkv")
        try bytes.prefix(20_000).write(to: cut)
        try bytes.write(to: misnamed)
        try Data().write(to: empty)

        let good = try await ECVProcess.run(["inspect", complete.path])
        #expect(good.status == 0 && good.stdout.hasSuffix("verdict: complete\n"), "\(good.stdout)\(good.stderr)")
        let thin = try await ECVProcess.run(["inspect", sparse.path, "--json"])
        #expect(thin.status == 1, "\(thin.stderr)")
        let verdict = try #require((try JSONSerialization.jsonObject(with: Data(thin.stdout.utf8)) as? [String: Any])?["verdict"] as? [String: Any])
        #expect(verdict["findings"] as? [String] == ["sparse"], "\(verdict)")
        #expect((verdict["details"] as? [String])?.first?.contains("packets in 3.0 s") == true, "\(verdict)")
        let short = try await ECVProcess.run(["inspect", cut.path])
        #expect(short.status == 1 && short.stdout.contains("verdict: cut short"), "\(short.stdout)")
        let renamed = try await ECVProcess.run(["inspect", misnamed.path, "--json"])
        #expect(renamed.status == 0, "Matroska named .mp4 is read as Matroska: \(renamed.stderr)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(renamed.stdout.utf8)) as? [String: Any])
        #expect(report["file"] as? String == misnamed.path && report["fileBytes"] as? Int == bytes.count, "\(report["file"] ?? "") \(report["fileBytes"] ?? "")")
        #expect(renamed.stdout.contains(#""file" : "\#(misnamed.path)""#), "paths as typed, slashes unescaped: \(renamed.stdout.prefix(300))")
        let nothing = try await ECVProcess.run(["inspect", empty.path])
        #expect(nothing.status == 1 && nothing.stderr.contains("empty.mkv is empty") && nothing.stdout.isEmpty, "\(nothing.stderr)")
    }
}
