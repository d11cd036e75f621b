import GStreamer

/// Receives video frames: the headless counterpart of the iOS SDK's `RTCVideoRenderer`.
///
/// Frames arrive on a media thread, one at a time; return quickly (copy what you need).
public protocol VideoRenderer: AnyObject, Sendable {
    /// The frame size changed (called before the first frame and on every change).
    func setSize(width: Int, height: Int)
    /// One decoded RGBA frame (nil is never sent today; kept for the seed's signature).
    func renderFrame(_ frame: VideoFrame?)
}

extension VideoRenderer {
    public func setSize(width: Int, height: Int) {}
}

/// The torch, for `FLASH_ON`/`FLASH_OFF` requests and `setFlashlightEnabled(state:)`.
/// Headless Linux has none: without a handler the SDK answers agents `UNAVAILABLE`.
///
/// Approval is never assumed: a handler that does not implement `approve(turningOn:)` refuses
/// every agent request (`FLASH_REFUSED`) and its torch is never switched by an agent. Implement it
/// to ask the user, and answer within the agent's flash timeout.
public protocol FlashlightHandler: Sendable {
    /// Asks the user whether the agent may switch the torch (EnQualify's approval step).
    /// The default refuses.
    func approve(turningOn: Bool) async -> Bool
    /// Switches the torch; false when it cannot.
    func setTorch(on: Bool) async -> Bool
}

extension FlashlightHandler {
    /// Refuses: nobody asked the user.
    public func approve(turningOn: Bool) async -> Bool { false }
}

/// Feeds frames from an appsink to whatever renderer is current, telling it about size changes.
final class RendererFeed: Sendable {
    private let renderer = Locked<(any VideoRenderer)?>(nil)
    private let size = Locked<(Int, Int)?>(nil)

    var current: (any VideoRenderer)? {
        get { renderer.value }
        set {
            renderer.value = newValue
            size.value = nil
        }
    }

    func attach(_ sink: AppSink) {
        sink.setSampleHandler { [weak self] sample in
            guard let self, let target = self.renderer.value, let frame = sample.videoFrame() else { return }
            let dimensions = (frame.width, frame.height)
            let changed = self.size.withLock { current -> Bool in
                guard current.map({ $0 != dimensions }) ?? true else { return false }
                current = dimensions
                return true
            }
            if changed { target.setSize(width: frame.width, height: frame.height) }
            target.renderFrame(frame)
        }
    }
}
