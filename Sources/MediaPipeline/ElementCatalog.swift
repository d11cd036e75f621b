/// One element factory as the registry describes it.
public struct CatalogEntry: Sendable, Hashable {
    /// The factory name, e.g. "vp8enc".
    public var name: String
    /// The registry rank (GST_RANK_NONE 0, MARGINAL 64, SECONDARY 128, PRIMARY 256, or between).
    public var rank: Int
    /// The factory's klass, e.g. "Codec/Encoder/Video/Hardware".
    public var klass: String

    public init(name: String, rank: Int, klass: String) {
        self.name = name
        self.rank = rank
        self.klass = klass
    }
}

/// Which element factories exist. The compiler asks it instead of GStreamer, so graphs can be
/// compiled (and tested) for machines with hardware this one lacks. The runtime's live catalog
/// reads the real registry (`gst_element_factory_find`).
public protocol ElementCatalog: Sendable {
    func factory(named name: String) -> CatalogEntry?
    var entries: [CatalogEntry] { get }
}

extension ElementCatalog {
    public func factory(named name: String) -> CatalogEntry? { entries.first { $0.name == name } }
    public func contains(_ name: String) -> Bool { factory(named: name) != nil }
}

/// A catalog from a fixed list: tests use it to pretend hardware encoders exist or plugins are missing.
public struct StaticCatalog: ElementCatalog, Hashable {
    public var entries: [CatalogEntry]

    public init(_ entries: [CatalogEntry]) {
        self.entries = entries
    }

    public func factory(named name: String) -> CatalogEntry? { entries.first { $0.name == name } }

    /// This catalog plus `extra` (entries with an existing name replace it).
    public func adding(_ extra: [CatalogEntry]) -> StaticCatalog {
        let names = Set(extra.map(\.name))
        return StaticCatalog(entries.filter { !names.contains($0.name) } + extra)
    }

    /// This catalog without the named factories.
    public func removing(_ names: Set<String>) -> StaticCatalog {
        StaticCatalog(entries.filter { !names.contains($0.name) })
    }
}
