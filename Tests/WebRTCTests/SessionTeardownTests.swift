import Foundation
import GLibCore
import GStreamer
import MediaPipeline
import MediaTestSupport
import Testing
@testable import WebRTC

/// A session's teardown leaves nothing inside webrtcbin running when its last reference goes.
///
/// Disposing a bin removes its children's pads, and a pad whose task still runs is joined until
/// that task ends. A call's teardown hung for good there (`gst_task_join` under
/// `PeerConnection.close`, a clean-clone CI's watchdog backtrace) on the task of a direct child of
/// webrtcbin (an element, not a bin), with webrtcbin's own threads gone: webrtcbin had stopped,
/// a child of it had not. webrtcbin 1.22 keeps its SCTP elements out of its state changes (their
/// state locked) until its DTLS transport connects, and starts them then from its own thread;
/// here the running SCTP encoder is put back in that state, and the session is torn down, by a
/// rebuild and then by a close. The test keeps a reference to the encoder, so that a running one
/// fails the test instead of hanging it, and stops it itself before letting go.
@Suite(.serialized) struct SessionTeardownTests {
    @Test func nothingInsideWebrtcbinRunsOnceItsSessionIsTornDown() async throws {
        let media = testMedia(videoEnabled: false)
        let pair = PeerPair(offerer: media, answerer: media)
        do {
            try await pair.start(dataChannels: [DataChannelConfig(enabled: true, label: "commands")])
            try await waitFor(.connected, on: pair.offerer)

            let first = try await runningEncoderHeldOutOfStateChanges(of: pair.offerer)
            try await pair.offerer.rebuild()
            try expectStopped(first, after: "a rebuild")

            try await waitFor(.connected, on: pair.offerer)
            let second = try await runningEncoderHeldOutOfStateChanges(of: pair.offerer)
            await pair.offerer.close()
            try expectStopped(second, after: "a close")
        } catch {
            await pair.close()
            throw error
        }
        await pair.close()
    }

    /// The current session's SCTP encoder once it runs (DTLS connected), with its state locked.
    private func runningEncoderHeldOutOfStateChanges(of peer: PeerConnection) async throws -> Element {
        let session = try #require(await peer.session)
        let encoder = Locked<Element?>(nil)
        try await eventually(.seconds(15), "webrtcbin \(session.number)'s SCTP encoder running") {
            let found = session.webrtc.descendants.first { $0.factoryName == "sctpenc" && $0.currentState == .playing }
            encoder.withLock { $0 = found }
            return found != nil
        }
        let running = try #require(encoder.value)
        running.setLockedState(true)
        return running
    }

    private func expectStopped(_ encoder: Element, after teardown: String) throws {
        let state = encoder.currentState
        // Ours may be its last reference: a running one would hang this test when it goes.
        if state != .null { encoder.requestState(.null) }
        #expect(state == .null, "the SCTP encoder after \(teardown): \(state)")
    }
}
