internal import CGLibShims
internal import CGStreamer

/// RTP header extensions on payloaders (GStreamer 1.22's `GstRTPHeaderExtension`).
extension Element {
    /// The transport-wide congestion control extension libwebrtc negotiates as `transport-cc`:
    /// a sequence number across every stream of the transport, which the receiver acknowledges
    /// in TWCC feedback, from which rtpsession reports what arrived (`twcc-stats`).
    package static let transportWideCCURI = "http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01"

    /// Makes this RTP payloader write the transport-wide sequence number under extension `id`
    /// (1…14, the one-byte form), announced in its caps as `extmap-<id>`.
    package func addTransportWideCCExtension(id: Int) throws(GStreamerError) {
        guard (1...14).contains(id) else { throw .notSupported("RTP header extension id \(id) (1…14)") }
        guard let created = gst_rtp_header_extension_create_from_uri(Self.transportWideCCURI) else {
            throw .notSupported("the transport-wide-cc RTP header extension (rtphdrexttwcc, gst-plugins-good)")
        }
        let raw = UnsafeMutableRawPointer(created)
        // Made by an element factory: floating, unless a future GStreamer hands it out sunk.
        let extensionObject = Object(raw, g_object_is_floating(raw) != 0 ? .floating : .owned)
        gst_rtp_header_extension_set_id(created, guint(id))
        _ = try emit("add-extension", .object(extensionObject))
    }

    /// Removes every header extension of this payloader (before adding them again under other ids).
    package func clearHeaderExtensions() throws(GStreamerError) {
        _ = try emit("clear-extensions")
    }
}
