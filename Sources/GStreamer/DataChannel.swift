internal import CGStreamer

/// A WebRTC data channel of a `webrtcbin`.
///
/// GStreamer 1.22 crashes or drops data when sending on a channel that is not open, so `send`
/// checks the state first and throws instead.
package final class DataChannel: Object, @unchecked Sendable {
    // @unchecked Sendable: adds no stored state; the channel's API is thread-safe in GStreamer.

    /// `ready-state` (GstWebRTCDataChannelState).
    package enum ReadyState: GEnumeration, Sendable, CustomStringConvertible {
        case connecting, open, closing, closed
        case unknown(Int)

        package static let known: [(value: Self, number: Int)] = [
            (.connecting, Int(GST_WEBRTC_DATA_CHANNEL_STATE_CONNECTING.rawValue)),
            (.open, Int(GST_WEBRTC_DATA_CHANNEL_STATE_OPEN.rawValue)),
            (.closing, Int(GST_WEBRTC_DATA_CHANNEL_STATE_CLOSING.rawValue)),
            (.closed, Int(GST_WEBRTC_DATA_CHANNEL_STATE_CLOSED.rawValue)),
        ]

        package var unknownNumber: Int? { if case .unknown(let number) = self { number } else { nil } }

        /// GStreamer's nick ("open"), for messages.
        package var description: String {
            switch self {
            case .connecting: "connecting"
            case .open: "open"
            case .closing: "closing"
            case .closed: "closed"
            case .unknown(let value): "state \(value)"
            }
        }
    }

    private static let readyStateKey = PropertyKey<ReadyState>("ready-state")

    var channel: OpaquePointer { OpaquePointer(raw) }

    package var label: String { property("label")?.stringValue ?? "" }
    package var id: Int { property("id")?.intValue ?? -1 }
    package var ordered: Bool { property("ordered")?.boolValue ?? true }
    package var channelProtocol: String { property("protocol")?.stringValue ?? "" }
    package var negotiated: Bool { property("negotiated")?.boolValue ?? false }
    package var maxRetransmits: Int { property("max-retransmits")?.intValue ?? -1 }
    package var maxPacketLifetime: Int { property("max-packet-lifetime")?.intValue ?? -1 }
    package var bufferedAmount: UInt64 { UInt64(property("buffered-amount")?.uintValue ?? 0) }

    package var readyState: ReadyState {
        // A readable property of GstWebRTCDataChannel itself (1.16 and later): `get` cannot throw for it.
        (try? get(Self.readyStateKey)) ?? .closed
    }

    /// One of the properties above: each is a readable property of GstWebRTCDataChannel itself
    /// (1.16 and later), so `get` cannot throw for it; the defaults only type the accessors.
    private func property(_ name: String) -> Value? {
        // Cannot throw for these names (see above).
        try? get(name)
    }

    override var diagnosticName: String { "data channel '\(label)'" }

    /// Sends a text message; throws when the channel is not open or GStreamer refuses it.
    package func send(text: String) throws(GStreamerError) {
        try requireOpen()
        var error: UnsafeMutablePointer<GError>?
        guard gst_webrtc_data_channel_send_string_full(channel, text, &error) != 0 else {
            throw .flow(element: diagnosticName, result: takeErrorMessage(error) ?? "send failed")
        }
    }

    /// Sends a binary message; throws when the channel is not open or GStreamer refuses it.
    package func send(data: [UInt8]) throws(GStreamerError) {
        try requireOpen()
        let bytes = data.withUnsafeBytes { g_bytes_new($0.baseAddress, gsize($0.count)) }
        defer { g_bytes_unref(bytes) }
        var error: UnsafeMutablePointer<GError>?
        guard gst_webrtc_data_channel_send_data_full(channel, bytes, &error) != 0 else {
            throw .flow(element: diagnosticName, result: takeErrorMessage(error) ?? "send failed")
        }
    }

    /// Closes the channel; idempotent.
    package func close() {
        guard readyState == .open || readyState == .connecting else { return }
        gst_webrtc_data_channel_close(channel)
    }

    private func requireOpen() throws(GStreamerError) {
        let state = readyState
        guard state == .open else {
            throw .notSupported("\(diagnosticName) is \(state), not open: message not sent")
        }
    }
}
