import GStreamer
import Testing

/// webrtcbin's enum-valued properties read and set as Swift enums, and a value the binding has no
/// name for kept as itself (`unknown`), never read as a wrong known one or stored unchecked.
@Suite struct TypedBindingTests {
    init() { _ = TestRuntime.ready }

    @Test func aNewWebRTCBinReadsItsStatesAsEnums() throws {
        let webrtc = try WebRTCBin()
        #expect(webrtc.signalingState == .stable)
        #expect(webrtc.iceConnectionState == .new)
        #expect(webrtc.iceGatheringState == .new)
        #expect(webrtc.connectionState == .new)
    }

    @Test func policiesAreSetAndReadBackTyped() throws {
        let webrtc = try WebRTCBin()
        try webrtc.set(WebRTCBin.bundlePolicy, .maxBundle)
        try webrtc.set(WebRTCBin.iceTransportPolicy, .relay)
        #expect(try webrtc.get(WebRTCBin.bundlePolicy) == .maxBundle)
        #expect(try webrtc.get(WebRTCBin.iceTransportPolicy) == .relay)
        #expect(try webrtc.get("bundle-policy").stringValue == "max-bundle", "the number is GStreamer's own for that nick")
    }

    @Test func anUnknownValueStaysItself() throws {
        #expect(WebRTCBin.SignalingState(gEnumValue: 99) == .unknown(99))
        #expect(WebRTCBin.SignalingState.unknown(99).gEnumValue == 99)
        #expect(WebRTCBin.PeerConnectionState(gEnumValue: WebRTCBin.PeerConnectionState.failed.gEnumValue) == .failed)
        let webrtc = try WebRTCBin()
        #expect(throws: GStreamerError.self) { try webrtc.set(WebRTCBin.bundlePolicy, .unknown(99)) }
        #expect(try webrtc.get(WebRTCBin.bundlePolicy) != .unknown(99))
    }

    @Test func aPropertyOfAnotherTypeIsAnError() throws {
        let webrtc = try WebRTCBin()
        #expect(throws: GStreamerError.self) { try webrtc.get(PropertyKey<Bool>("latency")) }
        #expect(try webrtc.get(WebRTCBin.latency) == 200, "webrtcbin's default")
    }
}
