import MediaPipeline

extension PipelineGraph {
    /// This graph with a local preview: the outgoing raw video, after the mute stage (so the
    /// preview shows what the far side gets), teed into an RGBA `appsink` named `name` through a
    /// leaky queue, so a slow renderer can never hold back the encoder.
    package func addingLocalPreview(named name: String) -> PipelineGraph {
        guard let mute = nodes(withRole: .videoMute).first,
              let outgoing = links.firstIndex(where: { $0.from.node == mute.id }) else { return self }
        var graph = self
        let tee = "\(name)_tee", queue = "\(name)_queue", convert = "\(name)_convert"
        let next = graph.links[outgoing]
        graph.links[outgoing] = PipelineLink(from: PadRef(mute.id), to: PadRef(tee))
        graph.links.append(PipelineLink(from: PadRef(tee), to: next.to, caps: next.caps))
        graph.links.append(PipelineLink(from: PadRef(tee), to: PadRef(queue)))
        graph.links.append(PipelineLink(from: PadRef(queue), to: PadRef(convert)))
        graph.links.append(PipelineLink(from: PadRef(convert), to: PadRef(name), caps: "video/x-raw,format=RGBA"))
        let index = graph.nodes.firstIndex { $0.id == mute.id }.map { $0 + 1 } ?? graph.nodes.count
        graph.nodes.insert(contentsOf: [
            PipelineNode(id: tee, factory: "tee"),
            PipelineNode(id: queue, factory: "queue", properties: [
                NodeProperty("leaky", .enumNick("downstream")), NodeProperty("max-size-buffers", .uint(2)),
                NodeProperty("max-size-time", .uint(0)), NodeProperty("max-size-bytes", .uint(0))]),
            PipelineNode(id: convert, factory: "videoconvert"),
            PipelineNode(id: name, factory: "appsink", properties: [
                NodeProperty("sync", .bool(false)), NodeProperty("max-buffers", .uint(1)), NodeProperty("drop", .bool(true))],
                role: .videoRenderer(name)),
        ], at: index)
        graph.decisions.append("local preview: raw video after \(mute.id) teed to appsink \(name) (RGBA, leaky)")
        return graph
    }
}
