/// A codec both sides agreed on for one kind of media, from the completed negotiation.
public struct NegotiatedCodec: Sendable, Equatable, CustomStringConvertible {
    public var kind: MediaKind
    public var encodingName: String
    public var payloadType: Int
    public var clockRate: Int
    /// The answer's `a=fmtp` parameters for this payload type.
    public var parameters: [String: String]

    public var description: String { "\(encodingName)/\(payloadType)" }

    package init(kind: MediaKind, encodingName: String, payloadType: Int, clockRate: Int, parameters: [String: String]) {
        self.kind = kind
        self.encodingName = encodingName
        self.payloadType = payloadType
        self.clockRate = clockRate
        self.parameters = parameters
    }
}
