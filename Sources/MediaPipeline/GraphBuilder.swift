/// Accumulates nodes, links and decisions while a compiler walks its branches, checking each
/// element against the catalog and each name for uniqueness as it goes.
struct GraphBuilder {
    let catalog: any ElementCatalog
    private(set) var nodes: [PipelineNode] = []
    private(set) var links: [PipelineLink] = []
    private(set) var decisions: [String] = []
    private var ids: Set<String> = []

    init(catalog: any ElementCatalog) {
        self.catalog = catalog
    }

    /// Adds an element; `purpose` appears in the error if the catalog lacks the factory.
    @discardableResult
    mutating func add(_ id: String, _ factory: String, _ properties: KeyValuePairs<String, PropertyValue> = [:],
                      role: NodeRole? = nil, purpose: String) throws(PipelineCompileError) -> String {
        try add(PipelineNode(id: id, factory: factory, properties: properties.map { NodeProperty($0.key, $0.value) }, role: role),
                purpose: purpose)
    }

    @discardableResult
    mutating func add(_ node: PipelineNode, purpose: String) throws(PipelineCompileError) -> String {
        guard catalog.contains(node.factory) else {
            throw .missingElement(factory: node.factory, package: DebianPackages.package(for: node.factory), purpose: purpose)
        }
        try ElementNames.validate(node.id)
        guard ids.insert(node.id).inserted else {
            throw .invalidName(node.id, reason: "two elements of the graph would share this name")
        }
        nodes.append(node)
        return node.id
    }

    /// Adds a `capsfilter` node (kept as a node so the runtime can change the caps in place).
    @discardableResult
    mutating func addCaps(_ id: String, _ caps: String, role: NodeRole? = nil) throws(PipelineCompileError) -> String {
        try add(id, "capsfilter", ["caps": .caps(caps)], role: role, purpose: "caps filtering")
    }

    mutating func link(_ from: String, _ to: String, fromPad: String? = nil, toPad: String? = nil,
                       dynamicSourcePad: MediaKind? = nil) {
        links.append(PipelineLink(from: PadRef(from, pad: fromPad), to: PadRef(to, pad: toPad), dynamicSourcePad: dynamicSourcePad))
    }

    /// Links each id to the next.
    mutating func chain(_ ids: [String]) {
        for (from, to) in zip(ids, ids.dropFirst()) { link(from, to) }
    }

    mutating func decide(_ line: String) {
        decisions.append(line)
    }

    func node(_ id: String) -> PipelineNode? { nodes.first { $0.id == id } }
}

/// Element names that gst-launch references (`name.`) and the runtime lookups handle safely.
enum ElementNames {
    static func validate(_ name: String) throws(PipelineCompileError) {
        guard let first = name.unicodeScalars.first, first.isASCII, first.properties.isAlphabetic else {
            throw .invalidName(name, reason: "names must start with an ASCII letter")
        }
        let valid = name.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "_") }
        guard valid else {
            throw .invalidName(name, reason: "names may only contain ASCII letters, digits and '_'")
        }
    }
}
