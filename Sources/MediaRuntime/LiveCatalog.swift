import GStreamer
import MediaPipeline

/// The element catalog of this machine: what GStreamer's registry really offers, with ranks.
package struct LiveCatalog: ElementCatalog {
    package let entries: [CatalogEntry]
    private let byName: [String: CatalogEntry]

    /// Reads the registry once per process; it does not change while we run.
    package static let shared = LiveCatalog()

    private init() {
        entries = ElementFactory.all().map { CatalogEntry(name: $0.name, rank: $0.rank, klass: $0.klass) }
        byName = Dictionary(entries.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
    }

    package func factory(named name: String) -> CatalogEntry? { byName[name] }
}
