/// Renders nodes and links as one line of gst-launch-1.0 syntax, deterministically.
///
/// Straight runs (one link out, one link in, no explicit pads) become `a ! b ! c` chains, started
/// in node order. Every other link uses reference syntax: appended to the upstream chain as
/// `! sel.sink_0` when the upstream end has a single link, else prefixed to the downstream
/// chain as `tee. ! …`, else written alone as `a.src_1 ! b.sink_2`. Link caps render inline.
struct LaunchRenderer {
    let nodes: [PipelineNode]
    let links: [PipelineLink]

    func render() -> String {
        let outgoing = Dictionary(grouping: links, by: \.from.node)
        let incoming = Dictionary(grouping: links, by: \.to.node)
        func isChainable(_ link: PipelineLink) -> Bool {
            link.from.pad == nil && link.to.pad == nil
                && outgoing[link.from.node]?.count == 1 && incoming[link.to.node]?.count == 1
        }
        let chainedInto = Set(links.filter(isChainable).map(\.to.node))
        let byID = Dictionary(nodes.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })

        var chains: [[String]] = []
        for node in nodes where !chainedInto.contains(node.id) {
            var chain = [node.id]
            while let next = outgoing[chain.last!]?.first, isChainable(next) {
                chain.append(next.to.node)
            }
            chains.append(chain)
        }
        var prefix: [String: String] = [:]   // chain head → "ref ! "
        var suffix: [String: String] = [:]   // chain tail → " ! ref"
        var standalone: [String] = []
        let heads = Set(chains.map { $0.first! })
        let tails = Set(chains.map { $0.last! })
        for link in links where !isChainable(link) {
            let caps = link.caps.map { " ! " + LaunchQuoting.quoted($0) } ?? ""
            if tails.contains(link.from.node), link.from.pad == nil, outgoing[link.from.node]?.count == 1 {
                suffix[link.from.node, default: ""] += caps + " ! " + link.to.description
            } else if heads.contains(link.to.node), link.to.pad == nil, incoming[link.to.node]?.count == 1 {
                prefix[link.to.node] = link.from.description + caps + " ! "
            } else {
                standalone.append(link.from.description + caps + " ! " + link.to.description)
            }
        }
        var statements: [String] = chains.map { chain in
            var text = prefix[chain.first!] ?? ""
            for (index, id) in chain.enumerated() {
                if index > 0 {
                    let link = outgoing[chain[index - 1]]!.first!
                    text += link.caps.map { " ! " + LaunchQuoting.quoted($0) } ?? ""
                    text += " ! "
                }
                text += Self.element(byID[id]!)
            }
            return text + (suffix[chain.last!] ?? "")
        }
        statements += standalone
        return statements.joined(separator: "  ")
    }

    static func element(_ node: PipelineNode) -> String {
        ([node.factory, "name=" + node.id] + node.properties.map { $0.name + "=" + $0.value.launchText })
            .joined(separator: " ")
    }
}
