@testable import GStreamer
import Synchronization
import Testing

@Suite struct SignalAndPromiseTests {
    init() { _ = TestRuntime.ready }

    /// A second identity behind the tap counts the buffers that went through it: the handler's
    /// silence is checked once twenty more have, not after some time.
    @Test func handlerStopsFiringAfterItsTokenGoes() async throws {
        let pipeline = try Pipeline(launch: "videotestsrc is-live=true ! video/x-raw,width=64,height=48,framerate=100/1 ! "
                                    + "identity name=tap signal-handoffs=true ! identity name=behind signal-handoffs=true ! fakesink")
        let tap = try #require(pipeline.element(named: "tap"))
        let behind = try #require(pipeline.element(named: "behind"))
        let counter = Counter(), passed = Counter()
        var token: SignalConnection? = try tap.connect("handoff") { _ in counter.increment() }
        let witness = try behind.connect("handoff") { _ in passed.increment() }
        try await pipeline.play()
        try await waitUntil("five handoffs") { counter.count >= 5 }
        #expect(token?.isConnected == true)
        token = nil
        let frozen = counter.count, passedBefore = passed.count
        try await waitUntil("twenty more buffers through the tap") { passed.count >= passedBefore + 20 }
        pipeline.stop()
        #expect(counter.count <= frozen + 1) // at most one emission already in flight
        witness.cancel()
        _ = token
    }

    @Test func signalArgumentsAreTyped() async throws {
        let pipeline = try Pipeline(launch: "audiotestsrc num-buffers=3 ! decodebin name=dec ! fakesink")
        let decoder = try #require(pipeline.element(named: "dec"))
        let padNames = Mutex<[String]>([])
        let token = try decoder.connect("pad-added") { arguments in
            if case .object(let pad as Pad) = arguments[1] { padNames.withLock { $0.append(pad.name) } }
        }
        try await pipeline.play()
        try await pipeline.waitForEndOfStream()
        pipeline.stop()
        token.cancel()
        #expect(padNames.withLock { $0.count } == 1)
    }

    @Test func unknownSignalThrows() throws {
        let element = try Element(factory: "identity")
        #expect(throws: GStreamerError.unknownSignal(object: element.description.isEmpty ? "" : "element '\(element.name)' (identity)", signal: "no-such-signal")) {
            _ = try element.connect("no-such-signal") { (_: SignalArguments) in }
        }
    }

    @Test func promiseResolvesThroughAsync() async throws {
        let webrtc = try Element(factory: "webrtcbin")
        webrtc.requestState(.ready)
        let stats = try #require(try await webrtc.emitAwaitingReply("get-stats", .object(nil)))
        #expect(stats.name == "application/x-webrtc-stats")
        #expect(stats.fields.contains { $0.value.structureValue?.string("type") == "peer-connection" })
        webrtc.requestState(.null)
    }

    @Test func promiseErrorReplyBecomesAThrownError() async throws {
        let closed = try Element(factory: "webrtcbin")
        await #expect {
            _ = try await closed.emitAwaitingReply("get-stats", .object(nil))
        } throws: { error in
            if case GStreamerError.promiseFailed("get-stats", let reason) = error { reason.contains("closed") } else { false }
        }
    }

    @Test func actionSignalReturnsItsValue() throws {
        let webrtc = try Element(factory: "webrtcbin")
        let transceiver = try webrtc.emit("add-transceiver", .enumeration(EnumValue(nick: "sendrecv", value: 4, typeName: "GstWebRTCRTPTransceiverDirection")),
                                          .caps(try Caps("application/x-rtp,media=video,encoding-name=VP8,payload=96,clock-rate=90000")))
        #expect(transceiver?.objectValue?.isA("GstWebRTCRTPTransceiver") == true)
        #expect(throws: GStreamerError.self) { try webrtc.emit("add-transceiver", .int(1)) }
    }
}
