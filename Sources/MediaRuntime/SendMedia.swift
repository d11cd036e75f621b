import GStreamer
import MediaPipeline
import Synchronization

/// A compiled send graph running inside a pipeline, with the controls a call needs while it runs:
/// video bitrate, audio/video mute, camera switch. None of them renegotiates or rebuilds anything.
package final class SendMedia: Sendable {
    /// The graph as it runs now: the compiled one, with the video encoding replaced when the
    /// negotiation chose another codec (see `replaceVideoEncoding(with:in:)`).
    package var graph: PipelineGraph { running.withLock { $0.graph } }
    package var elements: MaterializedGraph { running.withLock { $0.elements } }
    let running: Mutex<(graph: PipelineGraph, elements: MaterializedGraph)>
    private let fileLooper: FileLooper?

    struct Controls {
        var videoMuted = false
        var audioMuted = false
        var camera: String
        var videoBitrateKbps: Int?
        /// The transport-wide congestion control extension id the payloaders stamp (nil: none).
        var transportWideCCID: Int?
    }
    let controls: Mutex<Controls>

    /// Materialises `graph` into `pipeline`. Outputs (payloader src pads) are left for the caller
    /// to link to `webrtcbin` or a sink.
    package init(graph compiled: PipelineGraph, into pipeline: Pipeline) throws(MediaRuntimeError) {
        let graph = compiled.adaptedToAudioOutput()
        let elements = try MaterializedGraph(nodes: graph.nodes, links: graph.links, into: pipeline)
        running = Mutex((graph, elements))
        fileLooper = graph.fileLoops.isEmpty ? nil : FileLooper(loops: graph.fileLoops, elements: elements, pipeline: pipeline)
        controls = Mutex(Controls(camera: graph.cameraSwitch?.initial ?? "front",
                                  videoBitrateKbps: graph.videoBitrate?.initialKbps))
    }

    /// The element and pad name that carry the RTP stream of `kind`.
    package func output(_ kind: MediaKind) -> (element: Element, pad: String)? {
        guard let output = graph.output(kind), let element = elements.elements[output.node] else { return nil }
        return (element, output.pad)
    }

    /// The appsink named `name` (a local preview), if the graph has one.
    package func appSink(named name: String) -> AppSink? {
        // `AppSink` refuses an element that is no appsink: the graph then has no appsink of that name.
        elements.elements[name].flatMap { try? AppSink($0) }
    }

    /// The RTP payload type `kind` goes out with now (read from the payloader's caps).
    package func payloadType(_ kind: MediaKind) -> Int? {
        guard let output = output(kind) else { return nil }
        return output.element.staticPad(output.pad)?.currentCaps?.structures.first?.int("payload")
    }

    /// Sends `kind` with payload type `payloadType` from the next packet on: the answer to a
    /// remote offer must use the offer's numbers. The payloader negotiates the new caps with its
    /// next buffer; nothing else in the graph changes.
    package func setPayloadType(_ kind: MediaKind, to payloadType: Int) throws(MediaRuntimeError) {
        guard let output = output(kind) else {
            throw .unavailable(control: "\(kind.rawValue) payload type", reason: "the call sends no \(kind.rawValue)")
        }
        guard (96...127).contains(payloadType) || (0...34).contains(payloadType) else {
            throw .unavailable(control: "\(kind.rawValue) payload type \(payloadType)", reason: "it is not an RTP payload type")
        }
        let current = output.element.staticPad(output.pad)?.currentCaps?.structures.first
        guard current?.int("payload") != payloadType else { return }
        do throws(GStreamerError) {
            try output.element.set("pt", UInt(payloadType))
        } catch {
            throw .gstreamer(error)
        }
        output.element.staticPad(output.pad)?.markReconfigure()
    }

    /// Starts looping file sources; call once the pipeline is PLAYING.
    package func startFileLoops() { fileLooper?.start() }

    // MARK: Bitrate

    package var videoBitrateKbps: Int? { controls.withLock { $0.videoBitrateKbps } }

    /// Changes the video encoder's target bitrate while it runs, in the encoder's own unit. A step
    /// the app asks for starts with a key frame; bandwidth adaptation's small steps do not.
    package func setVideoBitrate(kbps: Int, requestKeyFrame: Bool = true) throws(MediaRuntimeError) {
        guard let control = graph.videoBitrate else {
            throw .unavailable(control: "video bitrate", reason: "the call has no video")
        }
        guard kbps > 0 else { throw .unavailable(control: "video bitrate \(kbps) kbit/s", reason: "it must be positive") }
        let encoder = try elements.element(control.node)
        do throws(GStreamerError) {
            try encoder.apply(NodeProperty(control.property, control.value(forKbps: kbps)))
        } catch {
            throw .gstreamer(error)
        }
        controls.withLock { $0.videoBitrateKbps = kbps }
        if requestKeyFrame { requestVideoKeyFrame() }
    }

    /// Makes the video encoder's next frame a key frame: after a camera switch (frames that
    /// reference the previous source show its blocks until then) and a bitrate step.
    @discardableResult
    package func requestVideoKeyFrame() -> Bool {
        guard let node = graph.nodes(withRole: .videoEncoder).first, let encoder = elements.elements[node.id],
              let output = encoder.staticPad("src") else { return false }
        return output.requestKeyFrame()
    }

    /// The picture size the video encoder is fed now (after scaling, before encoding): what the
    /// far end receives. nil without video or before the first frame.
    package var videoSize: PictureSize? {
        guard let node = graph.nodes(withRole: .videoEncoder).first,
              let structure = elements.elements[node.id]?.staticPad("sink")?.currentCaps?.structures.first,
              let width = structure.int("width"), let height = structure.int("height") else { return nil }
        return PictureSize(width: width, height: height)
    }

    // MARK: Mute

    package var isVideoMuted: Bool { controls.withLock { $0.videoMuted } }
    package var isAudioMuted: Bool { controls.withLock { $0.audioMuted } }

    /// Sends black frames instead of the picture (timing continues), or the picture again.
    package func setVideoMuted(_ muted: Bool) throws(MediaRuntimeError) {
        guard let mute = graph.videoMute else { throw .unavailable(control: "video mute", reason: "the call has no video") }
        try apply(mute, muted: muted)
        controls.withLock { $0.videoMuted = muted }
    }

    /// Sends silence instead of the microphone (timing continues), or the microphone again.
    package func setAudioMuted(_ muted: Bool) throws(MediaRuntimeError) {
        guard let mute = graph.audioMute else { throw .unavailable(control: "audio mute", reason: "the call has no audio") }
        try apply(mute, muted: muted)
        controls.withLock { $0.audioMuted = muted }
    }

    private func apply(_ mute: MuteControl, muted: Bool) throws(MediaRuntimeError) {
        let element = try elements.element(mute.node)
        do throws(GStreamerError) {
            for property in muted ? mute.muted : mute.unmuted { try element.apply(property) }
        } catch {
            throw .gstreamer(error)
        }
    }

    // MARK: Camera

    /// The registered camera names ("front", "back"); empty with a single source.
    package var cameras: [String] { graph.cameraSwitch.map { $0.pads.keys.sorted() } ?? [] }
    package var activeCamera: String { controls.withLock { $0.camera } }

    /// Makes `camera` the source that is encoded, by switching the selector's active pad.
    package func switchCamera(to camera: String) throws(MediaRuntimeError) {
        guard let cameraSwitch = graph.cameraSwitch else {
            throw .unavailable(control: "camera switch", reason: "only one video source was registered")
        }
        guard let padName = cameraSwitch.pads[camera] else { throw .unknownCamera(camera, available: cameras) }
        let selector = try elements.element(cameraSwitch.selector)
        guard let pad = selector.staticPad(padName) else { throw .missingNode("\(cameraSwitch.selector).\(padName)") }
        do throws(GStreamerError) {
            try selector.set("active-pad", pad)
        } catch {
            throw .gstreamer(error)
        }
        controls.withLock { $0.camera = camera }
        requestVideoKeyFrame()
    }

    /// Switches to the other camera and returns its name.
    @discardableResult
    package func toggleCamera() throws(MediaRuntimeError) -> String {
        let current = activeCamera
        guard let next = cameras.first(where: { $0 != current }) else {
            throw .unavailable(control: "camera switch", reason: "only one video source was registered")
        }
        try switchCamera(to: next)
        return next
    }
}
