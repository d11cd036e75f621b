import ECVPeer
import ECVService
import ECVTestSupport
import Foundation
import GLibCore
import Testing

/// The tutorial's MediaStream operations on a running call: renderers, track switches, the camera.
@Suite(.serialized) struct MediaStreamTests {
    final class LastFrame: VideoRenderer {
        let frame = Locked<VideoFrame?>(nil)
        let count = Locked(0)
        func renderFrame(_ frame: VideoFrame?) { self.frame.withLock { $0 = frame }; count.withLock { $0 += 1 } }

        var brightness: Double {
            guard let frame = frame.value else { return -1 }
            let mean = meanColor(frame, x: 0, y: 0, width: frame.width, height: frame.height)
            return (mean.red + mean.green + mean.blue) / 3
        }
    }

    @Test func videoOffSendsBlackCameraSwitchesAndRenderersComeAndGo() async throws {
        let backend = try await PeerBackend.start()
        let (caller, _) = try await backend.openPeer(id: "sender")
        let (callee, calleeEvents) = try await backend.openPeer(id: "viewer")
        let local = try Navigator.getUserMedia(constraints: PeerCallTests.constraints())
        let preview = LastFrame()
        local.addVideoRenderer(preview, track: 0)
        let call = caller.call(peerId: "viewer", stream: local)
        let incoming = try #require(try await calleeEvents.first("CALL") { $0.call != nil }.call)
        incoming.answer(stream: nil) // receive only
        let remote = try #require(try await Events(incoming.events()).first("STREAM") { $0.stream != nil }.stream)
        let view = LastFrame()
        remote.addVideoRenderer(view, track: 0)
        try await eventually(.seconds(15), "bars on the viewer") { view.count.value >= 10 && view.brightness > 60 }
        #expect(preview.count.value > 0, "the local renderer sees what is sent")

        await local.setEnableVideoTrack(enable: false)
        try await eventually(.seconds(10), "black on the viewer") { view.brightness >= 0 && view.brightness < 20 }
        await local.setEnableVideoTrack(enable: true)
        try await eventually(.seconds(10), "bars again") { view.brightness > 60 }
        #expect(local.getCameraPosition() == .front)
        #expect(try await local.switchCamera() == .back)
        #expect(local.getCameraPosition() == .back)

        remote.removeVideoRenderer(view, track: 0)
        let seen = view.count.value
        let decoded = remote.videoFrameCount
        try await eventually(.seconds(10), "frames still decoded") { remote.videoFrameCount >= decoded + 10 }
        #expect(view.count.value <= seen + 1, "a removed renderer gets no more frames")
        let single = try Navigator.getUserMedia(constraints: MediaConstraints(cameras: .single(.testPattern())))
        await #expect(throws: PeerError.self) { try await single.switchCamera() }
        #expect(throws: PeerError.self) { try Navigator.getUserMedia(constraints: MediaConstraints(videoCodec: "AV1")) }
        await call.closeAndWait()
        await caller.destroy()
        await callee.destroy()
        await backend.stop()
    }
}
