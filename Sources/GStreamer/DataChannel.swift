internal import CGStreamer

/// A WebRTC data channel of a `webrtcbin`.
///
/// GStreamer 1.22 crashes or drops data when sending on a channel that is not open, so `send`
/// checks the state first and throws instead.
public final class DataChannel: Object, @unchecked Sendable {
    // @unchecked Sendable: adds no stored state; the channel's API is thread-safe in GStreamer.

    public enum ReadyState: String, Sendable {
        case connecting, open, closing, closed
    }

    var channel: OpaquePointer { OpaquePointer(raw) }

    public var label: String { (try? get("label").stringValue) ?? nil ?? "" }
    public var id: Int { (try? get("id").intValue) ?? nil ?? -1 }
    public var ordered: Bool { (try? get("ordered").boolValue) ?? nil ?? true }
    public var channelProtocol: String { (try? get("protocol").stringValue) ?? nil ?? "" }
    public var negotiated: Bool { (try? get("negotiated").boolValue) ?? nil ?? false }
    public var maxRetransmits: Int { (try? get("max-retransmits").intValue) ?? nil ?? -1 }
    public var maxPacketLifetime: Int { (try? get("max-packet-lifetime").intValue) ?? nil ?? -1 }
    public var bufferedAmount: UInt64 { UInt64((try? get("buffered-amount").uintValue) ?? nil ?? 0) }

    public var readyState: ReadyState {
        guard case .enumeration(let state)? = try? get("ready-state") else { return .closed }
        return ReadyState(rawValue: state.nick) ?? .closed
    }

    override var diagnosticName: String { "data channel '\(label)'" }

    /// Sends a text message; throws when the channel is not open or GStreamer refuses it.
    public func send(text: String) throws(GStreamerError) {
        try requireOpen()
        var error: UnsafeMutablePointer<GError>?
        guard gst_webrtc_data_channel_send_string_full(channel, text, &error) != 0 else {
            throw .flow(element: diagnosticName, result: takeErrorMessage(error) ?? "send failed")
        }
    }

    /// Sends a binary message; throws when the channel is not open or GStreamer refuses it.
    public func send(data: [UInt8]) throws(GStreamerError) {
        try requireOpen()
        let bytes = data.withUnsafeBytes { g_bytes_new($0.baseAddress, gsize($0.count)) }
        defer { g_bytes_unref(bytes) }
        var error: UnsafeMutablePointer<GError>?
        guard gst_webrtc_data_channel_send_data_full(channel, bytes, &error) != 0 else {
            throw .flow(element: diagnosticName, result: takeErrorMessage(error) ?? "send failed")
        }
    }

    /// Closes the channel; idempotent.
    public func close() {
        guard readyState == .open || readyState == .connecting else { return }
        gst_webrtc_data_channel_close(channel)
    }

    private func requireOpen() throws(GStreamerError) {
        let state = readyState
        guard state == .open else {
            throw .notSupported("\(diagnosticName) is \(state.rawValue), not open: message not sent")
        }
    }
}
