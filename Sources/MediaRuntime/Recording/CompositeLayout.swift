import Foundation
import GStreamer
import MediaPipeline

/// The picture of a composite recording: the remote party full-frame, our own picture inset.
package struct CompositeLayout: Sendable, Hashable {
    package enum Corner: String, Sendable, Hashable { case topLeft, topRight, bottomLeft, bottomRight }

    /// The canvas, which the remote picture is scaled to fill. The WebRTC glue defaults it to the
    /// call's configured video size (what the far end is asked to send).
    package var width: Int
    package var height: Int
    package var framesPerSecond: Int
    /// The inset's size relative to the canvas (0.25 = a quarter of the width and height).
    package var insetScale: Double
    package var corner: Corner
    /// Pixels between the inset and the canvas edges.
    package var margin: Int
    /// The inset picture's width over its height (our own picture's shape, e.g. 0.75 for a
    /// portrait 480×640 camera); nil: the canvas's shape.
    package var insetAspectRatio: Double?
    /// `vp8enc target-bitrate`, bit/s.
    package var videoBitrate: Int
    /// `opusenc bitrate`, bit/s.
    package var audioBitrate: Int

    package init(width: Int = 640, height: Int = 480, framesPerSecond: Int = 30, insetScale: Double = 0.25,
                corner: Corner = .bottomRight, margin: Int = 8, insetAspectRatio: Double? = nil, videoBitrate: Int = 1_000_000,
                audioBitrate: Int = 64_000) {
        self.width = width
        self.height = height
        self.framesPerSecond = framesPerSecond
        self.insetScale = insetScale
        self.corner = corner
        self.margin = margin
        self.insetAspectRatio = insetAspectRatio
        self.videoBitrate = videoBitrate
        self.audioBitrate = audioBitrate
    }

    /// The canvas sized to a picture (even sides, as I420 needs), the rest of the layout kept.
    package func fitting(canvas size: PictureSize) -> CompositeLayout {
        var layout = self
        layout.width = max(16, size.width & ~1)
        layout.height = max(16, size.height & ~1)
        return layout
    }

    /// The inset's rectangle on the canvas, even-sized for I420: `insetScale` of the canvas's
    /// height, as wide as `insetAspectRatio` makes it (never wider than `insetScale` of the width).
    package var insetFrame: (x: Int, y: Int, width: Int, height: Int) {
        var insetWidth = max(2, Int(Double(width) * insetScale) & ~1)
        var insetHeight = max(2, Int(Double(height) * insetScale) & ~1)
        if let aspect = insetAspectRatio, aspect > 0 {
            let widthForHeight = Int(Double(insetHeight) * aspect) & ~1
            if widthForHeight <= insetWidth {
                insetWidth = max(2, widthForHeight)
            } else {
                insetHeight = max(2, Int(Double(insetWidth) / aspect) & ~1)
            }
        }
        let left = margin, right = width - insetWidth - margin
        let top = margin, bottom = height - insetHeight - margin
        switch corner {
        case .topLeft: return (left, top, insetWidth, insetHeight)
        case .topRight: return (right, top, insetWidth, insetHeight)
        case .bottomLeft: return (left, bottom, insetWidth, insetHeight)
        case .bottomRight: return (right, bottom, insetWidth, insetHeight)
        }
    }

    func validate() throws(RecordingError) {
        guard width >= 16, height >= 16, width % 2 == 0, height % 2 == 0 else {
            throw .invalidOptions("the composite canvas must be at least 16×16 with even sides, not \(width)×\(height)")
        }
        if let aspect = insetAspectRatio, !(aspect.isFinite && aspect >= 0.1 && aspect <= 10) {
            throw .invalidOptions("the inset aspect ratio must be between 0.1 and 10, not \(aspect)")
        }
        guard insetScale > 0, insetScale < 1 else { throw .invalidOptions("the inset scale must be between 0 and 1, not \(insetScale)") }
        guard framesPerSecond > 0, videoBitrate > 0, audioBitrate > 0 else {
            throw .invalidOptions("the composite frame rate and bitrates must be positive")
        }
    }
}

/// The fixed part of a composite pipeline: a black canvas and digital silence as the bottom
/// layers (so the output runs whether or not either side has video or sound), the compositor and
/// the mixer, the VP8 and Opus encoders, the muxer and the file.
struct CompositeGraph {
    /// How long the compositor and the mixer wait for late inputs (decoding and the far end's
    /// jitter buffer make incoming pictures late relative to their timestamps).
    static let aggregatorLatency: UInt64 = 800_000_000

    let pipeline: Pipeline
    let compositor: Element
    let mixer: Element
    let baseSources: [Element]

    init(layout: CompositeLayout, format: RecordingFormat, path: String, clusterDuration: Int64) throws(GStreamerError) {
        let rate = "framerate=\(layout.framesPerSecond)/1"
        let canvas = "video/x-raw,format=I420,width=\(layout.width),height=\(layout.height),\(rate)"
        let keyframeDistance = layout.framesPerSecond * 2
        let description = """
            compositor name=compositor background=black latency=\(Self.aggregatorLatency) ! \(canvas) ! queue ! \
            vp8enc deadline=1 cpu-used=8 end-usage=cbr lag-in-frames=0 target-bitrate=\(layout.videoBitrate) \
            keyframe-max-dist=\(keyframeDistance) ! queue ! mux.video_0 \
            audiomixer name=mixer latency=\(Self.aggregatorLatency) ! audio/x-raw,rate=48000,channels=2 ! audioconvert ! \
            opusenc bitrate=\(layout.audioBitrate) ! queue ! mux.audio_0 \
            \(format.muxerFactory) name=mux max-cluster-duration=\(clusterDuration) \
            min-cluster-duration=\(min(clusterDuration, 500_000_000)) writing-app=ECVKit ! filesink name=file buffer-mode=unbuffered async=false \
            videotestsrc name=canvas is-live=true pattern=black ! \(canvas) ! compositor. \
            audiotestsrc name=silence is-live=true wave=silence ! audio/x-raw,rate=48000,channels=2 ! mixer.
            """
        let pipeline = try Pipeline(launch: description)
        guard let compositor = pipeline.element(named: "compositor"), let mixer = pipeline.element(named: "mixer"),
              let canvasSource = pipeline.element(named: "canvas"), let silence = pipeline.element(named: "silence"),
              let file = pipeline.element(named: "file") else {
            throw .notSupported("the composite graph is missing an element")
        }
        try file.set("location", path)
        self.pipeline = pipeline
        self.compositor = compositor
        self.mixer = mixer
        baseSources = [canvasSource, silence]
        if let base = compositor.pads.first(where: { $0.direction == .sink }) { try base.set("zorder", UInt(0)) }
    }
}
