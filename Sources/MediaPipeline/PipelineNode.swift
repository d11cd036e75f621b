/// Audio or video: which RTP stream, branch or sink a piece of the graph belongs to.
public enum MediaKind: String, Sendable, Hashable, CaseIterable {
    case audio
    case video
}

/// One GStreamer element to create: a unique name, its factory and its properties.
public struct PipelineNode: Sendable, Hashable, Identifiable {
    /// The element's `name`, unique in the graph; the runtime looks elements up by it.
    public let id: String
    public var factory: String
    public var properties: [NodeProperty]
    public var role: NodeRole?
    /// Nanoseconds the runtime takes off the timestamps of every buffer leaving the element's
    /// `src` pad (0: none): the delay the element and those before it put into the signal while
    /// keeping their input's timestamps, so that downstream places it where it was captured. Not
    /// expressible in gst-launch syntax; the graph's decisions name it.
    public var outputTimestampAdvance: UInt64

    public init(id: String, factory: String, properties: [NodeProperty] = [], role: NodeRole? = nil,
                outputTimestampAdvance: UInt64 = 0) {
        self.id = id
        self.factory = factory
        self.properties = properties
        self.role = role
        self.outputTimestampAdvance = outputTimestampAdvance
    }

    /// The value set for a property, if the compiler set one.
    public subscript(property name: String) -> PropertyValue? {
        properties.last { $0.name == name }?.value
    }

    /// Sets or replaces a property, keeping its position when it already exists.
    mutating func set(_ name: String, _ value: PropertyValue) {
        if let index = properties.firstIndex(where: { $0.name == name }) {
            properties[index].value = value
        } else {
            properties.append(NodeProperty(name, value))
        }
    }
}

/// A pad of a node: `pad == nil` means "any compatible pad", which for request pads
/// (input-selector, audiomixer, tee) means "request a new one".
public struct PadRef: Sendable, Hashable, CustomStringConvertible {
    public var node: String
    public var pad: String?

    public init(_ node: String, pad: String? = nil) {
        self.node = node
        self.pad = pad
    }

    /// gst-launch reference syntax: `node.` or `node.pad`.
    public var description: String { node + "." + (pad ?? "") }
}

/// A link between two pads, optionally filtered by caps.
public struct PipelineLink: Sendable, Hashable {
    public var from: PadRef
    public var to: PadRef
    /// Caps the link must satisfy (`gst_element_link_filtered`), or nil.
    public var caps: String?
    /// When set, `from` has a *sometimes* pad (decodebin): link the first new pad carrying this
    /// kind of media when it appears (`pad-added`), instead of at construction time.
    public var dynamicSourcePad: MediaKind?

    public init(from: PadRef, to: PadRef, caps: String? = nil, dynamicSourcePad: MediaKind? = nil) {
        self.from = from
        self.to = to
        self.caps = caps
        self.dynamicSourcePad = dynamicSourcePad
    }
}
