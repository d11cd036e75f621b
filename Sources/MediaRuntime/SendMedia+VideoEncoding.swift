import GStreamer
import MediaPipeline

/// Sending the video as the codec a negotiation chose.
extension SendMedia {
    /// The roles of the nodes that turn raw video into RTP of one codec: what a codec change
    /// replaces. Everything before them (sources, camera switch, mute, the encoder's queue) stays.
    static let videoEncodingRoles: Set<NodeRole> = [.videoEncoderUpload, .videoEncoder, .videoEncodedFormat, .videoParser, .videoPayloader]

    /// The codec the video goes out as now ("VP8", "VP9", "H264"), nil without video.
    package var videoEncodingName: String? { graph.output(.video)?.encodingName }

    /// True when the video can be re-encoded as another codec: it is encoded here, not pushed
    /// in already encoded.
    package var canChangeVideoCodec: Bool { !graph.nodes(withRole: .videoEncoder).isEmpty }

    /// Replaces the video encoding (upload steps, encoder, encoded format, parser, payloader) with
    /// `replacement`'s, the same send graph compiled for another codec, while the pipeline plays:
    /// the encoder's queue is held once idle, the old elements stop and leave, the new ones are
    /// linked in their place (to whatever the old payloader fed) and started, and the queue lets
    /// frames through again, the first of them a key frame. The bitrate the encoder ran at (set
    /// by the app or by adaptation) carries over; payload type and header extensions are the
    /// caller's to set again, as after any negotiation.
    package func replaceVideoEncoding(with compiled: PipelineGraph, in bin: Bin) throws(MediaRuntimeError) {
        let replacement = Self.convertingFirst(compiled)
        let (graph, elements) = running.withLock { ($0.graph, $0.elements) }
        let (oldIDs, oldEntry) = Self.videoEncoding(of: graph)
        let (newIDs, newEntry) = Self.videoEncoding(of: replacement)
        let newNodes = replacement.nodes.filter { newIDs.contains($0.id) }
        guard canChangeVideoCodec, let entry = oldEntry.map({ graph.links[$0] }), let newEntry = newEntry.map({ replacement.links[$0] }),
              newEntry.from == entry.from, let oldOutput = graph.output(.video), let newOutput = replacement.output(.video) else {
            throw .unavailable(control: "video codec change", reason: "the video is not encoded in this graph")
        }
        let upstream = try elements.element(entry.from.node)
        let oldFirst = try elements.element(entry.to.node)
        let oldPayloader = try elements.element(oldOutput.node)
        guard let upstreamPad = upstream.staticPad(entry.from.pad ?? "src") else { throw .missingNode("\(entry.from.node).src") }
        // The push running now is one frame through the old encoder: well under a second even
        // on a host whose cores are all taken.
        guard let block = upstreamPad.blockWhenIdle(timeout: .seconds(5)) else {
            throw .unavailable(control: "video codec change", reason: "the encoder's queue did not go idle within 5 s")
        }
        defer { block.cancel() }
        let downstream = oldPayloader.staticPad(oldOutput.pad)?.peer
        if let downstream, let source = oldPayloader.staticPad(oldOutput.pad) { _ = source.unlink(from: downstream) }
        upstream.unlink(from: oldFirst)
        for id in graph.nodes.map(\.id).reversed() where oldIDs.contains(id) {
            if let element = elements.elements[id] { bin.stopAndRemove(element) }
        }
        let internalLinks = replacement.links.filter { newIDs.contains($0.from.node) && newIDs.contains($0.to.node) }
        let added = try MaterializedGraph(nodes: newNodes, links: internalLinks, into: bin)
        let first = try added.element(newEntry.to.node)
        let payloader = try added.element(newOutput.node)
        do throws(GStreamerError) {
            try upstream.link(pad: newEntry.from.pad, to: first, pad: newEntry.to.pad, filter: newEntry.caps.map { text throws(GStreamerError) in try Caps(text) })
            if let downstream, let source = payloader.staticPad(newOutput.pad) { try source.link(to: downstream) }
            try added.syncStateWithParent()
            if let entryPad = upstreamPad.peer { upstreamPad.sendStickyEvents(to: entryPad) }
        } catch {
            added.remove(from: bin)
            throw .gstreamer(error)
        }
        running.withLock { $0 = (Self.graph(graph, replacingVideoEncodingWith: replacement, oldIDs: oldIDs, newIDs: newIDs),
                                 elements.replacing(oldIDs, with: added)) }
        let (kbps, transportWideCCID) = controls.withLock { ($0.videoBitrateKbps, $0.transportWideCCID) }
        if transportWideCCID != nil { try setTransportWideCC(id: transportWideCCID) }
        if let kbps, kbps != replacement.videoBitrate?.initialKbps { try setVideoBitrate(kbps: kbps, requestKeyFrame: false) }
    }

    /// The ids of `graph`'s video encoding nodes, and the index of the link that feeds them.
    static func videoEncoding(of graph: PipelineGraph) -> (ids: Set<String>, entry: Int?) {
        let ids = Set(graph.nodes.filter { $0.role.map(videoEncodingRoles.contains) ?? false }.map(\.id))
        return (ids, graph.links.firstIndex { ids.contains($0.to.node) && !ids.contains($0.from.node) })
    }

    /// The id of the converter a replaced encoding starts with.
    static let encodingConverter = "video_encoding_convert"

    /// `graph` with a `videoconvert` in front of its video encoding. The raw format was agreed
    /// with the encoder being replaced (vp9enc takes Y444, say); the frames already queued in it
    /// reach the new encoder before upstream agrees on another one, and x264enc fed Y444 makes
    /// High 4:4:4, which the constrained-baseline caps refuse: not negotiated, and the video
    /// stopped for good. The converter passes frames through untouched once the format fits.
    static func convertingFirst(_ graph: PipelineGraph) -> PipelineGraph {
        let (ids, entryLink) = videoEncoding(of: graph)
        guard !ids.contains(encodingConverter), let entryIndex = entryLink,
              let firstIndex = graph.nodes.firstIndex(where: { $0.id == graph.links[entryIndex].to.node }) else { return graph }
        var result = graph
        let entry = graph.links[entryIndex]
        result.nodes.insert(PipelineNode(id: encodingConverter, factory: "videoconvert", role: .videoEncoderUpload), at: firstIndex)
        result.links[entryIndex] = PipelineLink(from: entry.from, to: PadRef(encodingConverter))
        result.links.append(PipelineLink(from: PadRef(encodingConverter), to: entry.to, caps: entry.caps))
        return result
    }

    /// `graph` with its video encoding nodes, their links, output and bitrate control taken from
    /// `replacement` (the graph compiled for the new codec), everything else as it was.
    static func graph(_ graph: PipelineGraph, replacingVideoEncodingWith replacement: PipelineGraph,
                      oldIDs: Set<String>, newIDs: Set<String>) -> PipelineGraph {
        var result = graph
        result.nodes = graph.nodes.flatMap { node -> [PipelineNode] in
            guard oldIDs.contains(node.id) else { return [node] }
            return node.id == graph.nodes.first(where: { oldIDs.contains($0.id) })?.id ? replacement.nodes.filter { newIDs.contains($0.id) } : []
        }
        result.links = graph.links.filter { !oldIDs.contains($0.from.node) && !oldIDs.contains($0.to.node) }
            + replacement.links.filter { newIDs.contains($0.from.node) || newIDs.contains($0.to.node) }
        result.outputs = graph.outputs.map { $0.kind == .video ? (replacement.output(.video) ?? $0) : $0 }
        result.videoBitrate = replacement.videoBitrate
        result.decisions = graph.decisions + replacement.decisions.filter { $0.hasPrefix("video encoder") }
        return result
    }
}
