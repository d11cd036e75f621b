import GLibCore
import GStreamer
import MediaPipeline
import MediaRuntime
import Synchronization

extension PeerConnection {
    /// A writer for the app's pictures as the outgoing video: the call's video source must be
    /// `.app(name:)` (`name` here). Sent at the call's frame rate.
    package func videoWriter(source name: String) throws(AppMediaError) -> VideoFrameWriter {
        guard !isClosed, let pipeline = mediaPipeline, let media else { throw .notRunning("the peer connection has not started") }
        guard let element = media.elements.elements[name], element.factoryName == "appsrc" else {
            throw .notEnabled("the call's video source is not .app(name: \"\(name)\")")
        }
        let source: AppSource
        do throws(GStreamerError) { source = try AppSource(element) } catch { throw .media("\(error)") }
        let caps = Mutex<String?>(nil)
        let fps = configuration.media.parameters.effectiveVideoFps
        return VideoFrameWriter(framesPerSecond: fps, now: { pipeline.runningTime.map { UInt64(max(0, $0.nanoseconds)) } ?? 0 }) { frame, pts in
            let wanted = "video/x-raw,format=\(frame.format),width=\(frame.width),height=\(frame.height),framerate=\(fps)/1"
            let changed = caps.withLock { current in defer { current = wanted }; return current != wanted }
            do throws(GStreamerError) {
                if changed { try source.configure(caps: try Caps(wanted)) }
                try source.push(frame.data, pts: pts, duration: UInt64(1_000_000_000 / max(1, fps)))
                return true
            } catch {
                return false
            }
        }
    }
}
