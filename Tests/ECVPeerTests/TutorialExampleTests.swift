import ECVPeer
import ECVService
import ECVTestSupport
import Foundation
import GLibCore
import Testing

/// README.md's peer example (the SkyWay tutorial's flow), run against the embedded peer server:
/// the same calls, with the server's port and the test's renderers in place of the README's.
@Suite(.serialized) struct TutorialExampleTests {
    final class CountingRenderer: VideoRenderer {
        let frames = Locked(0)
        func renderFrame(_ frame: VideoFrame?) { frames.withLock { $0 += 1 } }
    }

    @Test func theReadmesPeerFlowRuns() async throws {
        let backend = try await PeerBackend.start()
        let (callee, _) = try await backend.openPeer(id: "partner")
        callee.on(.CALL) { event in                                        // incoming calls
            if case .call(let call) = event { call.answer(stream: try? Navigator.getUserMedia(constraints: PeerCallTests.constraints())) } // README: getUserMedia() with defaults; fails only for bad constraints
        }
        let localView = CountingRenderer(), remoteView = CountingRenderer()
        let closed = Locked(false)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("readme-peer-\(UUID().uuidString).mkv")
        defer { try? FileManager.default.removeItem(at: file) } // a test's scratch file: gone either way

        let option = PeerOption(key: "demo", domain: "localhost", host: "127.0.0.1", port: backend.port, path: "/peerjs")
        let peer = Peer(id: nil, options: option)
        let done = Locked(false)
        peer.on(.OPEN) { event in
            guard case .open(let myId) = event else { return }
            Task {
                let constraints = MediaConstraints(maxWidth: 320, maxHeight: 240, cameraPosition: .front)
                let localStream = try Navigator.getUserMedia(constraints: constraints)
                localStream.addVideoRenderer(localView, track: 0)
                let others = await peer.listAllPeers().filter { $0.caseInsensitiveCompare(myId) != .orderedSame }
                guard let partner = others.first else { return }
                let call = peer.call(peerId: partner, stream: localStream)
                call.on(.STREAM) { event in
                    if case .stream(let remoteStream) = event { remoteStream.addVideoRenderer(remoteView, track: 0) }
                }
                call.on(.CLOSE) { _ in closed.withLock { $0 = true } }
                try await eventually(.seconds(15), "frames") { remoteView.frames.value >= 10 }
                try await call.startRecording(to: file)
                try await eventually(.seconds(15), "frames") { remoteView.frames.value >= 30 }
                #expect(try await localStream.switchCamera() == .back)
                call.close()
                done.withLock { $0 = true }
            }
        }
        try await eventually(.seconds(40), "the README's flow") { done.value && closed.value }
        #expect(localView.frames.value > 10, "the local renderer saw what was sent")
        #expect((try? FileManager.default.attributesOfItem(atPath: file.path)[.size] as? Int) ?? 0 > 5_000) // no file: 0 fails the expectation
        await peer.destroy()
        await callee.destroy()
        await backend.stop()
    }
}
