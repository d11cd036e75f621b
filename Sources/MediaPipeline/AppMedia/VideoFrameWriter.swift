import Synchronization

extension VideoFrame {
    /// The largest picture an app may push (4K), and the smallest.
    public static let pushedSizeRange = 16...4096

    /// A tightly packed RGBA (4 bytes a pixel) or I420 (a Y plane, then U and V at half size)
    /// picture the app drew, checked: even sizes within `pushedSizeRange`, the bytes the layout needs.
    public static func packed(format: RendererPixelFormat, width: Int, height: Int, data: [UInt8], pts: UInt64? = nil) throws(AppMediaError) -> VideoFrame {
        guard pushedSizeRange.contains(width), pushedSizeRange.contains(height), width % 2 == 0, height % 2 == 0 else {
            throw .invalidFrame("a \(width)×\(height) picture; use even sizes of \(pushedSizeRange.lowerBound)…\(pushedSizeRange.upperBound)")
        }
        let info: VideoInfo
        switch format {
        case .rgba:
            info = VideoInfo(width: width, height: height, format: "RGBA", framerate: (0, 1), strides: [width * 4], offsets: [0], size: width * height * 4)
        case .i420:
            let luma = width * height, chroma = luma / 4
            info = VideoInfo(width: width, height: height, format: "I420", framerate: (0, 1), strides: [width, width / 2, width / 2],
                             offsets: [0, luma, luma + chroma], size: luma + 2 * chroma)
        }
        guard data.count == info.size else { throw .invalidFrame("\(data.count) bytes for a \(width)×\(height) \(format.rawValue) picture of \(info.size)") }
        return VideoFrame(info: info, pts: pts, data: data)
    }
}

/// The app's pictures as the call's outgoing video: `write` any time (as often as the call's
/// frame rate at most is useful), and the encoder is fed at the call's steady rate, the newest
/// picture each tick, the last one again when the app is slow. Stops with the call or `close()`.
public final class VideoFrameWriter: Sendable {
    private struct State {
        var latest: VideoFrame?
        var fresh = false
        var written = 0
        var sent = 0
        var repeated = 0
        var closed = false
    }
    private let state = Mutex(State())
    private let ticker: Mutex<Task<Void, Never>?> = Mutex(nil)
    public let framesPerSecond: Int

    /// Made by the call: `emit` hands a picture to the send graph with its call-timeline time.
    package init(framesPerSecond: Int, now: @escaping @Sendable () -> UInt64, emit: @escaping @Sendable (VideoFrame, UInt64) -> Bool) {
        self.framesPerSecond = framesPerSecond
        let interval = Duration.nanoseconds(1_000_000_000 / Int64(max(1, framesPerSecond)))
        let task = Task.detached { [weak self] in
            var next = ContinuousClock.now
            while !Task.isCancelled {
                // Not held across the wait: a writer the app let go of stops.
                guard self?.tick(now: now, emit: emit) != nil else { return }
                next += interval
                do { try await Task.sleep(until: next, clock: .continuous) } catch { return }
            }
        }
        ticker.withLock { $0 = task }
    }

    deinit { ticker.withLock { $0 }?.cancel() }

    private func tick(now: @Sendable () -> UInt64, emit: @Sendable (VideoFrame, UInt64) -> Bool) {
        let (frame, fresh) = state.withLock { state -> (VideoFrame?, Bool) in
            defer { state.fresh = false }
            return (state.latest, state.fresh)
        }
        guard let frame, emit(frame, now()) else { return }
        state.withLock { state in state.sent += 1; if !fresh { state.repeated += 1 } }
    }

    /// Makes `frame` the picture sent from the next tick on.
    public func write(_ frame: VideoFrame) throws(AppMediaError) {
        guard frame.format == "RGBA" || frame.format == "I420" else { throw .invalidFrame("\(frame.format) pictures; push RGBA or I420") }
        guard VideoFrame.pushedSizeRange.contains(frame.width), VideoFrame.pushedSizeRange.contains(frame.height), frame.data.count == frame.info.size else {
            throw .invalidFrame("a \(frame.width)×\(frame.height) picture of \(frame.data.count) bytes (its layout needs \(frame.info.size)); make it with VideoFrame.packed")
        }
        let closed = state.withLock { state -> Bool in
            guard !state.closed else { return true }
            state.latest = frame
            state.fresh = true
            state.written += 1
            return false
        }
        if closed { throw .notRunning("the video writer was closed") }
    }

    /// Pictures written by the app, sent to the encoder, and sent again because no new one came.
    public var counts: (written: Int, sent: Int, repeated: Int) { state.withLock { ($0.written, $0.sent, $0.repeated) } }

    /// Stops feeding the encoder (the last picture stays on the far end's screen).
    public func close() {
        state.withLock { $0.closed = true }
        ticker.withLock { $0 }?.cancel()
    }
}
