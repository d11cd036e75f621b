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
