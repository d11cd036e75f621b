import GLibCore
import GStreamer
import MediaPipeline
import Synchronization

/// Feeds frames from an appsink to whatever renderer is current, telling it about size changes,
/// and measures the stream (size, rate, count) whether or not a renderer listens.
package final class RendererFeed: Sendable {
    /// What the feed has seen of its stream.
    package struct Measurement: Sendable {
        package var size: (width: Int, height: Int)?
        package var frames = 0
        package var framesPerSecond: Double?
    }

    private struct State {
        var renderer: (any VideoRenderer)?
        /// The size the current renderer was last told, so it hears of every change once.
        var toldSize: (width: Int, height: Int)?
        /// false: frames are measured but not handed to the renderer (`remoteStream` video off).
        var enabled = true
        var measurement = Measurement()
        /// Arrival times of the latest frames, oldest first, for the rate.
        var arrivals: [ContinuousClock.Instant] = []
    }
    private let state = Mutex(State())
    /// Frames the rate is measured over.
    private static let rateWindow = 30

    package init() {}

    package var current: (any VideoRenderer)? {
        get { state.withLock { $0.renderer } }
        set { state.withLock { $0.renderer = newValue; $0.toldSize = nil } }
    }

    package var isEnabled: Bool {
        get { state.withLock { $0.enabled } }
        set { state.withLock { $0.enabled = newValue } }
    }

    package var measurement: Measurement { state.withLock { $0.measurement } }

    package func attach(_ sink: AppSink) {
        sink.setSampleHandler { [weak self] sample in
            guard let self else { return }
            let now = ContinuousClock.now
            // The caps are parsed only when someone renders, and otherwise once per rate window:
            // this runs on the streaming thread for every frame.
            let needsInfo = self.state.withLock { $0.renderer != nil && $0.enabled || $0.measurement.frames % Self.rateWindow == 0 }
            let info = needsInfo ? sample.videoInfo : nil
            let (target, sizeChanged) = self.state.withLock { state -> ((any VideoRenderer)?, Bool) in
                state.measurement.frames += 1
                if let info { state.measurement.size = (info.width, info.height) }
                state.arrivals.append(now)
                if state.arrivals.count > Self.rateWindow + 1 { state.arrivals.removeFirst() }
                if let first = state.arrivals.first, state.arrivals.count > 1 {
                    let seconds = Double((now - first).nanoseconds) / 1e9
                    state.measurement.framesPerSecond = seconds > 0 ? Double(state.arrivals.count - 1) / seconds : nil
                }
                guard state.enabled, let renderer = state.renderer, let info else { return (nil, false) }
                let changed = state.toldSize.map { $0 != (info.width, info.height) } ?? true
                state.toldSize = (info.width, info.height)
                return (renderer, changed)
            }
            guard let target, let frame = sample.videoFrame() else { return }
            if sizeChanged { target.setSize(width: frame.width, height: frame.height) }
            target.renderFrame(frame)
        }
    }
}

/// A renderer that hands each frame to a closure (the agent bot's `onCallerFrame`).
package final class FrameHandler: VideoRenderer {
    private let handler: @Sendable (VideoFrame) -> Void

    package init(_ handler: @escaping @Sendable (VideoFrame) -> Void) { self.handler = handler }

    package func renderFrame(_ frame: VideoFrame?) { if let frame { handler(frame) } }
}
