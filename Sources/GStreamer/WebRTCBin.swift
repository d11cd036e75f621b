internal import CGLibShims
internal import CGStreamer
internal import CGStreamerShims

/// A `webrtcbin` element with its action signals as typed Swift calls.
///
/// The WebRTC layer above builds a peer connection from this; here we only translate between
/// Swift and the C-level objects (promises, session descriptions, data channels, transceivers).
package final class WebRTCBin: Element, @unchecked Sendable {
    // @unchecked Sendable: adds no stored state; webrtcbin serialises its own operations.

    package convenience init(name: String? = nil) throws(GStreamerError) {
        GStreamerRuntime.require()
        guard let created = gst_element_factory_make("webrtcbin", name) else {
            throw .elementNotFound(factory: "webrtcbin (gstreamer1.0-plugins-bad and gstreamer1.0-nice)")
        }
        self.init(UnsafeMutableRawPointer(created), .floating)
    }

    /// webrtcbin's own `rtpbin` (1.22 names it so), for the settings webrtcbin does not forward.
    package var rtpBin: Element? {
        guard let found = gst_bin_get_by_name(raw.assumingMemoryBound(to: GstBin.self), "rtpbin") else { return nil }
        return Object.wrap(UnsafeMutableRawPointer(found), .owned) as? Element
    }

    // MARK: Negotiation

    package func createOffer() async throws(GStreamerError) -> SessionDescription {
        try await create("create-offer", field: "offer")
    }

    package func createAnswer() async throws(GStreamerError) -> SessionDescription {
        try await create("create-answer", field: "answer")
    }

    private func create(_ signal: String, field: String) async throws(GStreamerError) -> SessionDescription {
        try await PromiseBridge.await(signal, extract: { reply in
            guard let reply, let value = gst_structure_get_value(reply, field),
                  let boxed = g_value_get_boxed(value),
                  let description = SessionDescription(reading: boxed.assumingMemoryBound(to: GstWebRTCSessionDescription.self))
            else { return .failure(.promiseFailed(operation: signal, reason: "reply has no \(field)")) }
            return .success(description)
        }) { promise throws(GStreamerError) in
            _ = try emit(signal, arguments: [.value(.structure(nil)), .boxed(UnsafeMutableRawPointer(promise))])
        }
    }

    package func setLocalDescription(_ description: SessionDescription) async throws(GStreamerError) {
        try await setDescription("set-local-description", description)
    }

    package func setRemoteDescription(_ description: SessionDescription) async throws(GStreamerError) {
        try await setDescription("set-remote-description", description)
    }

    private func setDescription(_ signal: String, _ description: SessionDescription) async throws(GStreamerError) {
        let native = try description.makeNative()
        defer { gst_webrtc_session_description_free(native) }
        try await PromiseBridge.await(signal, extract: { _ in .success(()) }) { promise throws(GStreamerError) in
            _ = try emit(signal, arguments: [.boxed(UnsafeMutableRawPointer(native)), .boxed(UnsafeMutableRawPointer(promise))])
        }
    }

    /// Adds a remote ICE candidate for the media section `mlineIndex`.
    package func addICECandidate(mlineIndex: UInt, candidate: String) throws(GStreamerError) {
        _ = try emit("add-ice-candidate", .uint(mlineIndex), .string(candidate))
    }

    /// Adds a transceiver; `caps` (e.g. with `extmap-N` fields) shape what it negotiates.
    @discardableResult
    package func addTransceiver(direction: TransceiverDirection, caps: Caps?) throws(GStreamerError) -> Object? {
        let directionValue = GValueConversion.enumValue(type: gst_webrtc_rtp_transceiver_direction_get_type(), value: direction.gEnumValue)
        return try emit("add-transceiver", .enumeration(directionValue), .caps(caps))?.objectValue
    }

    /// Creates a data channel. `options` holds webrtcbin's fields: ordered, max-packet-lifetime,
    /// max-retransmits, protocol, negotiated, id, priority.
    package func createDataChannel(label: String, options: Structure?) throws(GStreamerError) -> DataChannel {
        guard let channel = try emit("create-data-channel", .string(label), .structure(options))?.objectValue as? DataChannel else {
            throw .notSupported("webrtcbin refused data channel '\(label)' (options: \(options?.description ?? "none")); "
                                + "channels can only be created once the element is in READY or later")
        }
        return channel
    }

    /// Adds a TURN server URL (turn(s)://user:password@host:port); returns false when rejected.
    @discardableResult
    package func addTurnServer(_ url: String) throws(GStreamerError) -> Bool {
        try emit("add-turn-server", .string(url))?.boolValue ?? false
    }

    /// The raw stats structure from `get-stats`, one field per stats object.
    package func stats() async throws(GStreamerError) -> Structure {
        guard let stats = try await emitAwaitingReply("get-stats", .object(nil)) else {
            throw .promiseFailed(operation: "get-stats", reason: "empty reply")
        }
        return stats
    }

    // MARK: State

    package var localDescription: SessionDescription? { description("current-local-description") ?? description("pending-local-description") }
    package var remoteDescription: SessionDescription? { description("current-remote-description") ?? description("pending-remote-description") }

    private func description(_ property: String) -> SessionDescription? {
        // Both description properties are webrtcbin's own (1.16 and later): `paramSpec` finds them.
        guard let spec = try? paramSpec(property) else { return nil }
        return withGValue(of: spec.pointee.value_type) { gvalue in
            g_object_get_property(gobject, property, gvalue)
            return g_value_get_boxed(gvalue).flatMap {
                SessionDescription(reading: $0.assumingMemoryBound(to: GstWebRTCSessionDescription.self))
            }
        }
    }
}
