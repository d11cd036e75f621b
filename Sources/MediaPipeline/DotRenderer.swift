/// Renders nodes and links as a Graphviz digraph: one box per element (id, factory, properties),
/// one edge per link (labelled with pads and caps), dashed edges to external targets.
struct DotRenderer {
    let nodes: [PipelineNode]
    let links: [PipelineLink]
    /// (pad, external target name, edge label) for outputs and fragment exits.
    let exits: [(PadRef, String, String)]

    func render(name: String) -> String {
        var lines = ["digraph \(Self.quoted(name)) {", "  rankdir=LR;", "  node [shape=box, fontname=\"monospace\"];"]
        for node in nodes {
            let label = ([node.id, node.factory] + node.properties.map { "\($0.name)=\($0.value.launchText)" })
                .map(Self.escaped).joined(separator: "\\n")
            lines.append("  \(Self.quoted(node.id)) [label=\"\(label)\"];")
        }
        for link in links {
            var labels: [String] = []
            if link.from.pad != nil || link.to.pad != nil {
                labels.append("\(link.from.pad ?? "") → \(link.to.pad ?? "")")
            }
            if let caps = link.caps { labels.append(caps) }
            if let kind = link.dynamicSourcePad { labels.append("(\(kind.rawValue) pad when it appears)") }
            let attributes = labels.isEmpty ? "" : " [label=\"\(labels.map(Self.escaped).joined(separator: "\\n"))\"]"
            lines.append("  \(Self.quoted(link.from.node)) -> \(Self.quoted(link.to.node))\(attributes);")
        }
        let targets = Set(exits.map(\.1))
        for target in targets.sorted() {
            lines.append("  \(Self.quoted(target)) [shape=ellipse, style=dashed];")
        }
        for (pad, target, label) in exits {
            lines.append("  \(Self.quoted(pad.node)) -> \(Self.quoted(target)) [style=dashed, label=\"\(Self.escaped(label))\"];")
        }
        lines.append("}")
        return lines.joined(separator: "\n") + "\n"
    }

    static func escaped(_ text: String) -> String {
        var escaped = ""
        for character in text {
            if character == "\"" || character == "\\" { escaped.append("\\") }
            escaped.append(character)
        }
        return escaped
    }

    static func quoted(_ text: String) -> String { "\"" + escaped(text) + "\"" }
}
