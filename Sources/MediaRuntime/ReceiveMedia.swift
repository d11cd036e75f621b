import GLibCore
import GStreamer
import MediaPipeline
import Synchronization

/// A compiled receive fragment running inside a pipeline: one incoming RTP stream decoded to a
/// renderer, played, discarded or kept encoded for a recorder.
package final class ReceiveMedia: Sendable {
    package let fragment: PipelineFragment
    package let elements: MaterializedGraph
    /// Counts the pictures leaving the decoder of a decoding video branch (nil where nothing
    /// decodes), so a picture that stopped while packets still arrive can be noticed.
    private let decoderOutput: DecoderOutput?

    /// Adds `fragment` to the running `pipeline`, links `sourcePad` (a webrtcbin src pad) to its
    /// entry and its exit to the send graph's speaker mixer when it has one.
    package init(fragment: PipelineFragment, into pipeline: Pipeline, from sourcePad: Pad,
                send: SendMedia?) throws(MediaRuntimeError) {
        let fragment = fragment.adaptedToAudioOutput()
        self.fragment = fragment
        elements = try MaterializedGraph(nodes: fragment.nodes, links: fragment.links, into: pipeline)
        decoderOutput = fragment.kind == .video ? DecoderOutput(elements: elements, fragment: fragment) : nil
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
            try elements.syncStateWithParent()
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

    /// Pictures decoded so far; nil for audio and for branches that do not decode.
    package var decodedPictures: Int? { decoderOutput?.count }

    /// Asks the sender for a key frame (RTCP PLI, through webrtcbin) from this branch's entry.
    @discardableResult
    package func requestKeyFrame() -> Bool {
        elements.elements[fragment.entry.node]?.staticPad(fragment.entry.pad ?? "sink")?.requestKeyFrame() ?? false
    }

    /// The appsink of a `.renderer` or `.audioSamples` fragment.
    package var appSink: AppSink? {
        let node = fragment.nodes.first { node in
            switch node.role {
            case .videoRenderer?, .audioSamplesSink?: true
            default: false
            }
        }
        // The receive compiler makes both roles appsinks, which `AppSink` never refuses.
        return node.flatMap { elements.elements[$0.id] }.flatMap { try? AppSink($0) }
    }

    /// The tee of a `.passthrough` fragment, where a recorder attaches.
    package var recorderTee: Element? {
        fragment.nodes.first { if case .recorderTee? = $0.role { true } else { false } }.flatMap { elements.elements[$0.id] }
    }
}


extension ReceiveMedia {
    /// Silences (or restores) far-end playback; false when this fragment plays nothing (video,
    /// samples for the app, pass-through, discard), where there is nothing to silence.
    @discardableResult
    package func setPlaybackMuted(_ muted: Bool) throws(MediaRuntimeError) -> Bool {
        guard let node = fragment.nodes.first(where: { $0.role == .playbackMute }) else { return false }
        let volume = try elements.element(node.id)
        do throws(GStreamerError) { try volume.set("mute", muted) } catch { throw .gstreamer(error) }
        return true
    }

    /// The far end's picture size as this fragment last saw it: the caps of the furthest element
    /// downstream that states one (a decoder's raw video; or, for pass-through, the parser's or
    /// the depayloader's, which read it from each key frame). nil before the first key frame and
    /// for audio.
    package var pictureSize: PictureSize? {
        guard fragment.kind == .video else { return nil }
        for node in fragment.nodes.reversed() {
            guard let pad = elements.elements[node.id]?.staticPad("src"),
                  let structure = pad.currentCaps?.structures.first,
                  let width = structure.int("width"), let height = structure.int("height"), width > 0, height > 0 else { continue }
            return PictureSize(width: width, height: height)
        }
        return nil
    }
}

/// The width and height of a video stream, in pixels.
package struct PictureSize: Sendable, Hashable, CustomStringConvertible {
    package var width: Int
    package var height: Int
    package init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }
    package var description: String { "\(width)×\(height)" }
}

/// Counts the pictures leaving a video decoder: a buffer probe on its output, one relaxed atomic
/// add per picture on the streaming thread, removed with the branch.
private final class DecoderOutput: Sendable {
    private final class Count: Sendable { let value = Atomic<Int>(0) }
    private let pictures = Count()
    private let probe: PadProbe

    init?(elements: MaterializedGraph, fragment: PipelineFragment) {
        guard let decoder = fragment.nodes.first(where: { $0.role == .decoder }),
              let pad = elements.elements[decoder.id]?.staticPad("src") else { return nil }
        let pictures = pictures
        probe = pad.addBufferProbe { _, _ in
            pictures.value.add(1, ordering: .relaxed)
            return .pass
        }
    }

    var count: Int { pictures.value.load(ordering: .relaxed) }
}
