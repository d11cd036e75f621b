import Foundation

/// What a call is dialed with (the seed's `DialCallParameters`). Every field is optional; a
/// caller without a name gets a generated one.
public struct DialCallParameters: Sendable, Equatable {
    public var callerName: String
    public var attributes: [String: String]
    /// nil: the service's default queue.
    public var queue: String?
    public var acdAttributes: [String: String]
    public var customPayload: [String: String]
    /// Sent as HTTP headers of the DialEx request.
    public var additionalHeaders: [String: String]

    /// The one initialiser that sets the fields; the queue-first one below forwards to it.
    public init(callerName: String? = nil, attributes: [String: String] = [:], queue: String? = nil,
                acdAttributes: [String: String] = [:], customPayload: [String: String] = [:],
                additionalHeaders: [String: String] = [:]) {
        let trimmed = callerName?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
        self.callerName = trimmed.isEmpty ? Self.generatedCallerName() : trimmed
        self.attributes = attributes
        self.queue = queue
        self.acdAttributes = acdAttributes
        self.customPayload = customPayload
        self.additionalHeaders = additionalHeaders
    }

    /// The seed's other order: its demo's queue screen passes `queue` *before* `attributes`
    /// (`DialCallParameters(callerName: name, queue: queue, attributes: [queueKey: queueValue])`),
    /// and Swift takes labelled arguments only in declaration order. Both are required here, so
    /// a call in the main order (or with neither, as `DialCallParameters()`) never resolves to
    /// this one.
    public init(callerName: String? = nil, queue: String?, attributes: [String: String],
                acdAttributes: [String: String] = [:], customPayload: [String: String] = [:],
                additionalHeaders: [String: String] = [:]) {
        self.init(callerName: callerName, attributes: attributes, queue: queue, acdAttributes: acdAttributes,
                  customPayload: customPayload, additionalHeaders: additionalHeaders)
    }

    /// "Caller-4821": readable in an agent desktop, unlikely to collide.
    static func generatedCallerName() -> String { "Caller-\(Int.random(in: 1000...9999))" }
}
