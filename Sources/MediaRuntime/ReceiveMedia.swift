import GStreamer
import MediaPipeline

/// A compiled receive fragment running inside a pipeline: one incoming RTP stream decoded to a
/// renderer, played, discarded or kept encoded for a recorder.
public final class ReceiveMedia: Sendable {
    public let fragment: PipelineFragment
    public let elements: MaterializedGraph

    /// Adds `fragment` to the running `pipeline`, links `sourcePad` (a webrtcbin src pad) to its
    /// entry and its exit to the send graph's speaker mixer when it has one.
    public init(fragment: PipelineFragment, into pipeline: Pipeline, from sourcePad: Pad,
                send: SendMedia?) throws(MediaRuntimeError) {
        let fragment = fragment.adaptedToAudioOutput()
        self.fragment = fragment
        elements = try MaterializedGraph(nodes: fragment.nodes, links: fragment.links, into: pipeline)
        InstanceCounter.increment("ReceiveMedia")
        do {
            try Self.connect(fragment: fragment, elements: elements, from: sourcePad, send: send)
        } catch {
            elements.remove(from: pipeline)
            throw error
        }
    }

    private static func connect(fragment: PipelineFragment, elements: MaterializedGraph, from sourcePad: Pad,
                                send: SendMedia?) throws(MediaRuntimeError) {
        do throws(GStreamerError) {
            if let exit = fragment.exit, let target = fragment.exitTarget {
                guard let mixer = send?.elements.elements[target.node] else {
                    throw .linkFailed(source: exit.description, sink: target.description, reason: "the send graph has no \(target.node)")
                }
                guard let exitElement = elements.elements[exit.node] else {
                    throw .padNotFound(element: exit.node, pad: exit.pad ?? "src")
                }
                try exitElement.link(pad: exit.pad, to: mixer, pad: target.pad)
            }
            elements.syncStateWithParent()
            guard let entryPad = elements.elements[fragment.entry.node]?.staticPad(fragment.entry.pad ?? "sink") else {
                throw .padNotFound(element: fragment.entry.node, pad: fragment.entry.pad ?? "sink")
            }
            try sourcePad.link(to: entryPad)
            // The sender may send key frames only on request: a decoder that starts now asks.
            if fragment.kind == .video { entryPad.requestKeyFrame() }
        } catch {
            throw .gstreamer(error)
        }
    }

    deinit { InstanceCounter.decrement("ReceiveMedia") }

    /// The appsink of a `.renderer` or `.audioSamples` fragment.
    public var appSink: AppSink? {
        let node = fragment.nodes.first { node in
            switch node.role {
            case .videoRenderer?, .audioSamplesSink?: true
            default: false
            }
        }
        return node.flatMap { elements.elements[$0.id] }.flatMap { try? AppSink($0) }
    }

    /// The tee of a `.passthrough` fragment, where a recorder attaches.
    public var recorderTee: Element? {
        fragment.nodes.first { if case .recorderTee? = $0.role { true } else { false } }.flatMap { elements.elements[$0.id] }
    }
}

