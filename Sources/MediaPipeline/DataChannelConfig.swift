/// How the call's text data channel (HOLD/PICKUP, FLASH_ON/OFF and custom commands) is opened.
///
/// Mirrors the seed SDK's `DataChannelConfig` field for field so code written against the iOS SDK
/// compiles unchanged. `-1` means "not set" for `id`, `maxRetransmits` and `maxRetransmitTimeMs`,
/// exactly as WebRTC's `RTCDataChannelInit` uses it; the WebRTC layer maps these to
/// `webrtcbin`'s `create-data-channel` options.
public struct DataChannelConfig: Sendable, Equatable, Hashable {
    /// The label the built-in text channel uses when the caller does not choose one.
    /// "textchannel" names the channel by its job (the seed calls it the "text channel") and is
    /// what our reference service and agent bots listen for.
    public static let defaultTextChannelLabel = "textchannel"

    /// The default of the SDK's `ConnectParameters.textChannelConfig`: enabled, reliable and ordered,
    /// negotiated in-band (the agent side learns it from the DCEP open message).
    public static let defaultTextChannel = DataChannelConfig(enabled: true, label: defaultTextChannelLabel)

    public var enabled: Bool
    public var label: String
    /// The SCTP stream id, -1 to let the stack choose. Only meaningful with `negotiated`.
    public var id: Int
    /// True when both sides create the channel themselves with the same `id` (no DCEP handshake).
    public var negotiated: Bool
    /// The sub-protocol name. Spelled with backticks because `protocol` is a Swift keyword;
    /// `config.protocol` reads naturally at use sites.
    public var `protocol`: String
    public var ordered: Bool
    /// Partial reliability by count; -1 = unset (fully reliable).
    public var maxRetransmits: Int
    /// Partial reliability by time in milliseconds; -1 = unset (fully reliable).
    public var maxRetransmitTimeMs: Int

    public init(
        enabled: Bool,
        label: String,
        id: Int = -1,
        negotiated: Bool = false,
        protocol: String = "",
        ordered: Bool = true,
        maxRetransmits: Int = -1,
        maxRetransmitTimeMs: Int = -1
    ) {
        self.enabled = enabled
        self.label = label
        self.id = id
        self.negotiated = negotiated
        self.protocol = `protocol`
        self.ordered = ordered
        self.maxRetransmits = maxRetransmits
        self.maxRetransmitTimeMs = maxRetransmitTimeMs
    }
}
