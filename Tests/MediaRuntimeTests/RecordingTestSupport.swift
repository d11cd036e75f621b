import Foundation
import GStreamer
import MediaPipeline
@testable import MediaRuntime
import Testing

enum TestRuntime {
    static let ready: Void = {
        LeakTracer.enableBeforeInitialization()
        try! GStreamerRuntime.ensureInitialized()
    }()
}

/// A stand-in for a call's pipeline: live test sources encoded and payloaded into RTP tees
/// (allow-not-linked, like the peer connection's), each also feeding a fakesink as webrtcbin would.
final class FakeCall: Sendable {
    let pipeline: Pipeline
    let videoTee: Element
    let audioTee: Element
    let videoCodec: RecordedCodec

    init(video codec: RecordedCodec = .vp8, pattern: String = "ball", width: Int = 320, height: Int = 240) async throws {
        _ = TestRuntime.ready
        let encoder = switch codec {
        case .vp8: "vp8enc deadline=1 keyframe-max-dist=30 ! rtpvp8pay"
        case .vp9: "vp9enc deadline=1 keyframe-max-dist=30 ! rtpvp9pay"
        default: "x264enc tune=zerolatency speed-preset=ultrafast key-int-max=30 ! video/x-h264,profile=constrained-baseline ! h264parse ! rtph264pay config-interval=-1 aggregate-mode=zero-latency"
        }
        pipeline = try Pipeline(launch: """
            videotestsrc is-live=true pattern=\(pattern) ! capsfilter name=size caps=video/x-raw,width=\(width),height=\(height),framerate=30/1 ! \
            \(encoder) ! \
            tee name=vtee allow-not-linked=true ! queue ! fakesink sync=false \
            audiotestsrc is-live=true ! audio/x-raw,rate=48000,channels=1 ! opusenc ! rtpopuspay ! \
            tee name=atee allow-not-linked=true ! queue ! fakesink sync=false
            """)
        videoTee = try #require(pipeline.element(named: "vtee"))
        audioTee = try #require(pipeline.element(named: "atee"))
        videoCodec = codec
        try await pipeline.play()
    }

    var elementCount: Int { pipeline.children.count }

    /// Changes the picture size mid-stream, as a browser does when its CPU or its path is short.
    func resize(width: Int, height: Int) throws {
        let filter = try #require(pipeline.element(named: "size"))
        try filter.set("caps", try Caps("video/x-raw,width=\(width),height=\(height),framerate=30/1"))
    }

    func stop() { pipeline.stop() }
}

func temporaryFile(_ name: String) -> URL {
    let directory = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("ecv-recording-tests", isDirectory: true)
    try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    removeOldRecordings(in: directory)
    let url = directory.appendingPathComponent("\(UUID().uuidString.prefix(8))-\(name)")
    return url
}

struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Waits for the recorder to report `count` started tracks.
func waitForTracks(_ recorder: CallRecorder, count: Int, timeout: Duration = .seconds(15)) async throws {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if recorder.startedTracks.count >= count { return }
        try await Task.sleep(for: .milliseconds(100))
    }
    throw TestFailure("only \(recorder.startedTracks) of \(count) tracks started within \(timeout)")
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
