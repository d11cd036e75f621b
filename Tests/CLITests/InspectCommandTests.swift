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
        #expect(result.status == 0, "\(result.stderr)")
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
        #expect(text.status == 0 && text.stdout.contains("verdict: a party missing"), "\(text.stdout)")
    }

    @Test func wrongInputIsNamedAndRefused() async throws {
        let none = try await ECVProcess.run(["inspect"])
        #expect(none.status == 2 && none.stderr.contains("inspect takes one recording file"))
        let text = try await ECVProcess.run(["inspect", "notes.txt"])
        #expect(text.status == 2 && text.stderr.contains("not 'notes.txt'"))
        let missing = try await ECVProcess.run(["inspect", "/nonexistent/call.mkv"])
        #expect(missing.status == 1 && missing.stderr.contains("cannot read /nonexistent/call.mkv"), "\(missing.stderr)")
        let every = try await ECVProcess.run(["inspect", "x.mkv", "--every", "soon"])
        #expect(every.status == 2 && every.stderr.contains("--every takes a number"))
    }
}
