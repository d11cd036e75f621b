import Foundation
import GStreamer
import MediaPipeline
import MediaRuntime
import MediaTestSupport
import Testing
@testable import WebRTC

/// What `gst-discoverer-1.0 -v <file>` says about a file: its duration and its streams.
struct Discovery {
    struct Stream {
        var type: String
        var caps: String
        var tags: [String]
        var mediaType: String { String(caps.prefix { $0 != "," }) }
    }
    var duration: Double
    var streams: [Stream]
    var output: String

    func streams(_ type: String) -> [Stream] { streams.filter { $0.type == type } }

    static func run(_ url: URL) throws -> Discovery {
        let tool = "/usr/bin/gst-discoverer-1.0"
        guard FileManager.default.isExecutableFile(atPath: tool) else {
            throw TestFailure("\(tool) is missing: install gstreamer1.0-plugins-base-apps")
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = ["-v", url.path]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let output = String(decoding: data, as: UTF8.self)
        return Discovery(output: output)
    }

    init(output: String) {
        self.output = output
        var duration = -1.0
        var streams: [Stream] = []
        for raw in output.split(separator: "\n", omittingEmptySubsequences: false) {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.hasPrefix("Duration: ") {
                let parts = line.dropFirst("Duration: ".count).split(separator: ":").compactMap { Double($0) }
                if parts.count == 3 { duration = parts[0] * 3600 + parts[1] * 60 + parts[2] }
            } else if let match = line.firstMatch(of: /^(video|audio|subtitles) #\d+: (.*)$/) {
                streams.append(Stream(type: String(match.1), caps: String(match.2), tags: []))
            } else if !streams.isEmpty, line.hasPrefix("title: ") {
                streams[streams.count - 1].tags.append(String(line.dropFirst("title: ".count)))
            }
        }
        self.duration = duration
        self.streams = streams
    }
}

func recordingFile(_ name: String) -> URL {
    let directory = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("ecv-recording-tests", isDirectory: true)
    try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    removeOldRecordings(in: directory)
    return directory.appendingPathComponent("\(UUID().uuidString.prefix(8))-\(name)")
}

/// Starts a connected call with media flowing both ways.
func connectedPair(offerer: MediaConfiguration, answerer: MediaConfiguration) async throws -> (PeerPair, RemoteMedia, RemoteMedia) {
    let pair = PeerPair(offerer: offerer, answerer: answerer)
    let atOfferer = RemoteMedia(pair.offerer), atAnswerer = RemoteMedia(pair.answerer)
    try await pair.start()
    try await waitFor(.connected, on: pair.offerer)
    // Every remote stream wired (audio's branch can come after video's), so element counts are final.
    try await eventually(.seconds(10), "first frames and samples both ways") {
        atOfferer.video.count > 0 && atAnswerer.video.count > 0 && atOfferer.audio.count > 0 && atAnswerer.audio.count > 0
    }
    return (pair, atOfferer, atAnswerer)
}

/// Waits until the recording has every track it declared in the file.
func waitForAllTracks(_ recording: CallRecording, timeout: Duration = .seconds(15)) async throws {
    let expected = recording.recorder.tracks.count
    try await eventually(timeout, "all \(expected) tracks recording") { recording.recorder.startedTracks.count == expected }
}

/// Test recordings stay for an hour (to look at after a failure), then the next run removes them.
private func removeOldRecordings(in directory: URL) {
    let manager = FileManager.default
    let hourAgo = Date().addingTimeInterval(-3600)
    for file in (try? manager.contentsOfDirectory(at: directory, includingPropertiesForKeys: [.contentModificationDateKey])) ?? [] {
        let modified = (try? file.resourceValues(forKeys: [.contentModificationDateKey]))?.contentModificationDate ?? .distantFuture
        if modified < hourAgo { try? manager.removeItem(at: file) }
    }
}
