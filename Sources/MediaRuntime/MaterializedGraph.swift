import GStreamer
import MediaPipeline

/// Compiled nodes and links turned into live elements inside a bin.
///
/// Elements are created, configured and added first, then linked in graph order; links from
/// *sometimes* pads (decodebin) are completed when the pad appears. The object keeps the
/// elements by node id and the pad-added handlers alive for as long as the graph runs.
package final class MaterializedGraph: Sendable {
    package let elements: [String: Element]
    /// Node ids in creation order (sources first), for ordered teardown.
    package let order: [String]
    private let dynamicLinks: [SignalConnection]
    /// The probes that move buffers earlier (`PipelineNode.outputTimestampAdvance`), kept while the graph runs.
    private let timestampAdvances: [PadProbe]

    /// Builds `nodes` and `links` into `bin`. On failure nothing stays in the bin.
    package init(nodes: [PipelineNode], links: [PipelineLink], into bin: Bin) throws(MediaRuntimeError) {
        var created: [String: Element] = [:]
        var added: [Element] = []
        var connections: [SignalConnection] = []
        var advances: [PadProbe] = []
        do throws(GStreamerError) {
            for node in nodes {
                let element = try Element(factory: node.factory, name: node.id)
                for property in node.properties { try element.apply(property) }
                if node.outputTimestampAdvance > 0 {
                    guard let output = element.staticPad("src") else { throw .padNotFound(element: node.id, pad: "src") }
                    advances.append(output.addTimestampAdvance(nanoseconds: node.outputTimestampAdvance))
                }
                try bin.add(element)
                added.append(element)
                created[node.id] = element
            }
            for link in links {
                guard let source = created[link.from.node], let sink = created[link.to.node] else {
                    throw .linkFailed(source: link.from.description, sink: link.to.description, reason: "node not in the graph")
                }
                let filter = try link.caps.map { (text: String) throws(GStreamerError) in try Caps(text) }
                if let kind = link.dynamicSourcePad {
                    connections.append(try Self.linkWhenPadAppears(source: source, kind: kind, sink: sink, sinkPad: link.to.pad, filter: filter))
                } else {
                    try source.link(pad: link.from.pad, to: sink, pad: link.to.pad, filter: filter)
                }
            }
        } catch {
            for connection in connections { connection.cancel() }
            for element in added.reversed() { bin.stopAndRemove(element) }
            throw .gstreamer(error)
        }
        elements = created
        order = nodes.map(\.id)
        dynamicLinks = connections
        timestampAdvances = advances
    }

    private init(elements: [String: Element], order: [String], dynamicLinks: [SignalConnection], timestampAdvances: [PadProbe]) {
        self.elements = elements
        self.order = order
        self.dynamicLinks = dynamicLinks
        self.timestampAdvances = timestampAdvances
    }

    /// This graph with the elements of `removed` (already taken out of the bin) replaced by
    /// `replacement`'s, which take the place of the first removed one in the teardown order.
    func replacing(_ removed: Set<String>, with replacement: MaterializedGraph) -> MaterializedGraph {
        var order: [String] = []
        for id in self.order {
            if !removed.contains(id) {
                order.append(id)
            } else if !order.contains(where: replacement.elements.keys.contains) {
                order.append(contentsOf: replacement.order)
            }
        }
        let elements = self.elements.filter { !removed.contains($0.key) }.merging(replacement.elements) { _, new in new }
        return MaterializedGraph(elements: elements, order: order, dynamicLinks: dynamicLinks + replacement.dynamicLinks,
                                 timestampAdvances: timestampAdvances + replacement.timestampAdvances)
    }

    /// Links the first pad of `kind` that `source` adds later (decodebin's sometimes pads). A link
    /// that fails there would leave that media silently absent: it is posted as an ERROR from
    /// `source` on the pipeline's bus instead, where the pipeline's owner sees it.
    private static func linkWhenPadAppears(source: Element, kind: MediaKind, sink: Element, sinkPad: String?,
                                           filter: Caps?) throws(GStreamerError) -> SignalConnection {
        try source.connect("pad-added") { arguments in
            guard case .object(let pad as Pad) = arguments[1], pad.direction == .source else { return }
            let media = pad.currentCaps?.mediaType ?? pad.allowedCaps?.mediaType ?? ""
            guard media.hasPrefix(kind.rawValue), !(sink.staticPad(sinkPad ?? "sink")?.isLinked ?? false) else { return }
            do throws(GStreamerError) {
                try source.link(pad: pad.name, to: sink, pad: sinkPad, filter: filter)
            } catch {
                source.postError(error)
            }
        }
    }

    package func element(_ id: String) throws(MediaRuntimeError) -> Element {
        guard let element = elements[id] else { throw .missingNode(id) }
        return element
    }

    /// Sets every element to NULL and removes it from `bin`, sinks first, in the order GStreamer
    /// itself stops a pipeline. A sink that holds the streaming thread (waiting on the clock, or in
    /// preroll) lets it go when it stops, and the thread returns FLUSHING up the branch. Stopping
    /// an element upstream of it first waits for that element's stream lock, which the very
    /// thread blocked in the sink holds: the removal hung.
    package func remove(from bin: Bin) {
        for connection in dynamicLinks { connection.cancel() }
        for probe in timestampAdvances { probe.cancel() }
        for id in order.reversed() {
            guard let element = elements[id] else { continue }
            bin.stopAndRemove(element)
        }
    }

    /// Brings every element to the bin's state, for graphs added to a pipeline that already
    /// plays: sinks first so data never meets a stopped element, and every sink synchronous
    /// (`async` false). An asynchronous sink that joins a playing pipeline makes it lose its state
    /// until the sink has its first buffer; every sink that joins meanwhile (the next stream's
    /// branch) is brought only to PAUSED, takes one buffer and then holds its stream's thread,
    /// until the first sink's buffer comes (a video branch waits for a key frame) or for good.
    /// Live pipelines do not preroll, so nothing is lost.
    package func syncStateWithParent() throws(GStreamerError) {
        for element in elements.values where element.isA("GstBaseSink") {
            try element.set("async", false)
        }
        for id in order.reversed() { elements[id]?.syncStateWithParent() }
    }
}
