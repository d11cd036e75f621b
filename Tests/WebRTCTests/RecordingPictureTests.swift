import ECVRecording
import Foundation
import GStreamer
import MediaPipeline
import MediaRuntime
import MediaTestSupport
import Testing
@testable import WebRTC

/// Pictures out of a recorded call: a PNG snapshot of the remote video, and the composite layout.
@Suite(.serialized) struct RecordingPictureTests {
    @Test(arguments: ["VP8", "H264"])
    func snapshotWritesTheRemotePictureAsPNG(codec: String) async throws {
        let caller = testMedia(codec: codec, video: .single(.testPattern(pattern: "red")))
        let (pair, _, _) = try await connectedPair(offerer: caller, answerer: testMedia(codec: codec))
        let recording = try await pair.answerer.startRecording(to: recordingFile("snapshot.mkv"))
        try await waitForAllTracks(recording)
        let png = recordingFile("remote.png")
        try await recording.snapshot(to: png)
        let data = try Data(contentsOf: png)
        let size = try #require(pngSize(data), "not a PNG")
        #expect(size.width == 320 && size.height == 240)
        let picture = try await decodeFrame(of: png, with: "pngdec")
        #expect(picture.width == 320 && picture.height == 240)
        let color = meanColor(picture)
        #expect(color.red > 180 && color.green < 80 && color.blue < 80, "the caller sends red: \(color)")
        try await recording.stop()
        await #expect(throws: RecordingError.alreadyStopped) { try await recording.snapshot(to: png) }
        await pair.close()
    }

    @Test func compositeShowsTheRemotePartyWithTheLocalInset() async throws {
        let caller = testMedia(video: .single(.testPattern(pattern: "red")))
        let agent = testMedia(video: .single(.testPattern(pattern: "blue")))
        let (pair, _, _) = try await connectedPair(offerer: caller, answerer: agent)
        let url = recordingFile("composite.webm")
        let recording = try await pair.answerer.startCompositeRecording(to: url)
        try await Task.sleep(for: .seconds(4)) // media time to record
        try await recording.stop()
        #expect(recording.problems.isEmpty, "\(recording.problems)")

        let info = try await RecordingInspector.inspect(url)
        #expect(info.videoTracks.count == 1 && info.audioTracks.count == 1, "\(info.tracks.map(\.caps))")
        #expect(info.videoTracks.first?.mediaType == "video/x-vp8" && info.audioTracks.first?.mediaType == "audio/x-opus")
        #expect((info.videoTracks.first?.frames ?? 0) > 60)

        let frame = try await decodeFrame(of: url, with: "matroskademux ! vp8dec", at: 2.5)
        #expect(frame.width == 320 && frame.height == 240, "the canvas is the remote size")
        let layout = CompositeLayout(width: 320, height: 240)
        let inset = layout.insetFrame
        let main = meanColor(frame, x: 40, y: 40, width: 80, height: 60)
        let corner = meanColor(frame, x: inset.x + 8, y: inset.y + 8, width: inset.width - 16, height: inset.height - 16)
        #expect(main.red > 180 && main.blue < 80, "the caller (remote) fills the frame in red: \(main)")
        #expect(corner.blue > 180 && corner.red < 80, "the agent's own picture is the blue inset: \(corner)")
        await pair.close()
    }
}

/// Width and height from a PNG's IHDR chunk.
func pngSize(_ data: Data) -> (width: Int, height: Int)? {
    let bytes = [UInt8](data.prefix(24))
    guard bytes.count == 24, bytes[0..<8] == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A], bytes[12..<16] == [0x49, 0x48, 0x44, 0x52] else {
        return nil
    }
    func be32(_ offset: Int) -> Int { bytes[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) } }
    return (be32(16), be32(20))
}
