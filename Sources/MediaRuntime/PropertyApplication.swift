import GStreamer
import MediaPipeline

extension Element {
    /// Sets a compiled property in the property's own type: numbers and strings directly,
    /// enum nicks and preset text through GStreamer's deserialiser, caps and structures parsed.
    func apply(_ property: NodeProperty) throws(GStreamerError) {
        switch property.value {
        case .bool(let value): try set(property.name, value)
        case .int(let value): try set(property.name, value)
        case .uint(let value): try set(property.name, value)
        case .double(let value): try set(property.name, value)
        case .string(let value): try set(property.name, value)
        case .enumNick(let text), .serialized(let text): try set(property.name, fromString: text)
        case .caps(let text): try set(property.name, try Caps(text))
        case .structure(let text): try set(property.name, try Structure(parsing: text))
        case .fraction(let numerator, let denominator): try set(property.name, Value.fraction(numerator: numerator, denominator: denominator))
        }
    }
}
