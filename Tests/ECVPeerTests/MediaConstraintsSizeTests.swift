import ECVPeer
import ECVTestSupport
import Foundation
import GLibCore
import Testing

/// SkyWay's `maxWidth`/`maxHeight` are "the upper limit in pixels" of the picture: the camera's
/// own size is sent, scaled down to fit with its aspect kept, never up.
@Suite(.serialized) struct MediaConstraintsSizeTests {
    /// A 1280×960 (4:3) camera under the tutorial's 960×540 arrives as 720×540; a test-pattern
    /// camera (320×240 of its own) under 640×480 arrives as 320×240, not scaled up.
    @Test func maxWidthAndMaxHeightCapTheCameraKeepingItsAspect() async throws {
        let camera = FileManager.default.temporaryDirectory.appendingPathComponent("ecv-camera-1280x960-\(getpid()).webm")
        defer { try? FileManager.default.removeItem(at: camera) }
        let launch = Process()
        launch.executableURL = URL(fileURLWithPath: "/usr/bin/gst-launch-1.0")
        launch.arguments = ["-q", "videotestsrc", "num-buffers=20", "pattern=ball", "!", "video/x-raw,width=1280,height=960,framerate=10/1",
                            "!", "vp8enc", "deadline=1", "!", "webmmux", "!", "filesink", "location=\(camera.path)"]
        launch.standardOutput = FileHandle.nullDevice
        try launch.run()
        launch.waitUntilExit()
        #expect(launch.terminationStatus == 0)

        let backend = try await PeerBackend.start()
        let (caller, _) = try await backend.openPeer(id: "capped-caller")
        let (callee, calleeEvents) = try await backend.openPeer(id: "capped-callee")
        // The tutorial's own numbers.
        var tutorial = MediaConstraints(maxFrameRate: 10, cameras: .single(.file(path: camera.path, loop: true)))
        tutorial.maxWidth = 960
        tutorial.maxHeight = 540
        let local = try Navigator.getUserMedia(constraints: tutorial)
        let answering = try Navigator.getUserMedia(constraints: MediaConstraints(maxWidth: 640, maxHeight: 480, maxFrameRate: 10))
        let outgoing = caller.call(peerId: "capped-callee", stream: local)
        let outgoingEvents = Events(outgoing.events())
        let incoming = try #require(try await calleeEvents.first("CALL") { $0.call != nil }.call)
        let incomingEvents = Events(incoming.events())
        incoming.answer(stream: answering)
        let atCaller = try #require(try await outgoingEvents.first("STREAM at the caller") { $0.stream != nil }.stream)
        let atCallee = try #require(try await incomingEvents.first("STREAM at the callee") { $0.stream != nil }.stream)
        try await eventually(.seconds(15), "pictures both ways") { atCaller.videoFrameCount >= 5 && atCallee.videoFrameCount >= 5 }
        #expect(atCallee.videoSize.map { [$0.width, $0.height] } == [720, 540], "1280×960 within 960×540: \(String(describing: atCallee.videoSize))")
        #expect(atCaller.videoSize.map { [$0.width, $0.height] } == [320, 240], "320×240 within 640×480: \(String(describing: atCaller.videoSize))")
        await outgoing.closeAndWait()
        await caller.destroy()
        await callee.destroy()
        await backend.stop()
    }
}
