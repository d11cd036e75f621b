/// A GLib enum as a Swift enum (gstreamer-rs's model): the values the binding knows by name and
/// any other as `unknown(Int)`, so a value a newer GStreamer adds reads as itself, never as a
/// wrong known one, and a property is set only to a value its type has. An enum lists its known
/// values once (`known`, with the C enum's numbers); reading and writing follow from that list.
package protocol GEnumeration: ValueConvertible, Hashable {
    /// Each known value with its number in the C enum.
    static var known: [(value: Self, number: Int)] { get }
    /// A value the binding has no name for (an enum case `unknown(Int)` witnesses it).
    static func unknown(_ number: Int) -> Self
    /// The number of an `unknown` value; nil for a known one.
    var unknownNumber: Int? { get }
}

extension GEnumeration {
    /// The value GLib numbers `gEnumValue`.
    package init(gEnumValue: Int) { self = Self.known.first { $0.number == gEnumValue }?.value ?? .unknown(gEnumValue) }

    /// The value as GLib numbers it (the C enum's value).
    package var gEnumValue: Int { unknownNumber ?? Self.known.first { $0.value == self }?.number ?? -1 }

    /// Stored by number: the property's enum type checks that it has the value.
    package var gstValue: Value { .int(gEnumValue) }
}

/// A property of a known name and value type, so a set or read says what it sets in the types
/// (`try rtpSession.set(RTPSessionProperty.probation, 0)`), not in a string and a loose value.
package struct PropertyKey<Wrapped: ValueConvertible>: Sendable {
    package let name: String
    package init(_ name: String) { self.name = name }
}

/// A Swift value a property's value can be read back as.
package protocol ValueReadable: ValueConvertible {
    init?(readingValue value: Value)
}

extension Bool: ValueReadable { package init?(readingValue value: Value) { guard let v = value.boolValue else { return nil }; self = v } }
extension UInt: ValueReadable { package init?(readingValue value: Value) { guard let v = value.uintValue else { return nil }; self = v } }
extension UInt64: ValueReadable {
    package init?(readingValue value: Value) { guard let v = value.uintValue else { return nil }; self = UInt64(v) }
}
extension Int: ValueReadable { package init?(readingValue value: Value) { guard let v = value.intValue else { return nil }; self = v } }
extension Double: ValueReadable { package init?(readingValue value: Value) { guard let v = value.doubleValue else { return nil }; self = v } }
extension String: ValueReadable { package init?(readingValue value: Value) { guard let v = value.stringValue else { return nil }; self = v } }

extension Object {
    /// Sets `key` to `value` (see `set(_:_:)` for what throws).
    package func set<Wrapped>(_ key: PropertyKey<Wrapped>, _ value: Wrapped) throws(GStreamerError) {
        try set(key.name, value)
    }

    /// Reads `key` as its Swift type; throws when the object has no such readable property or it
    /// holds a value of another type.
    package func get<Wrapped: ValueReadable>(_ key: PropertyKey<Wrapped>) throws(GStreamerError) -> Wrapped {
        let value = try get(key.name)
        guard let typed = Wrapped(readingValue: value) else {
            throw .wrongPropertyType(object: diagnosticName, property: key.name, expected: "\(Wrapped.self)", got: value.kindName)
        }
        return typed
    }

    /// Reads an enum-valued property as its Swift enum.
    package func get<Wrapped: GEnumeration>(_ key: PropertyKey<Wrapped>) throws(GStreamerError) -> Wrapped {
        let value = try get(key.name)
        guard case .enumeration(let entry) = value else {
            throw .wrongPropertyType(object: diagnosticName, property: key.name, expected: "\(Wrapped.self)", got: value.kindName)
        }
        return Wrapped(gEnumValue: entry.value)
    }

    /// Reads an object-valued property (nil when unset).
    package func get(_ key: PropertyKey<Object>) throws(GStreamerError) -> Object? {
        let value = try get(key.name)
        guard case .object(let object) = value else {
            throw .wrongPropertyType(object: diagnosticName, property: key.name, expected: "an object", got: value.kindName)
        }
        return object
    }

    /// Reads a structure-valued property (nil when unset).
    package func get(_ key: PropertyKey<Structure>) throws(GStreamerError) -> Structure? {
        let value = try get(key.name)
        guard case .structure(let structure) = value else {
            throw .wrongPropertyType(object: diagnosticName, property: key.name, expected: "a structure", got: value.kindName)
        }
        return structure
    }
}

/// The properties of `tee` the layers above set.
package enum TeeProperty {
    /// Pushes on when no output is linked (a tee a recorder taps now and then).
    package static let allowNotLinked = PropertyKey<Bool>("allow-not-linked")
}
