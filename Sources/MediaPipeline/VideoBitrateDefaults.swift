/// The video bitrate used when `MediaParameters.videoMaxBitrate` is 0 ("WebRTC default").
///
/// libwebrtc picks its default maximum from the frame's pixel count rather than from width and
/// height separately, so a portrait 480x640 frame gets the same budget as landscape 640x480.
/// We do the same with a table tuned for one-to-one contact-center calls on modest uplinks:
///
/// | pixels (width x height)          | kbit/s |
/// | -------------------------------- | ------ |
/// | ≤ 76 800 (320x240)               | 300    |
/// | ≤ 307 200 (640x480, 480x640)     | 800    |
/// | ≤ 921 600 (1280x720)             | 1700   |
/// | larger                           | 2500   |
///
/// The value becomes the encoder's target bitrate at start; the runtime may lower it later
/// through `PipelineGraph.videoBitrate` (congestion control) but never raises it above this.
public enum VideoBitrateDefaults {
    /// The table above, smallest tier first: (maximum pixel count, kbit/s).
    public static let tiers: [(maxPixels: Int, kbps: Int)] = [
        (320 * 240, 300),
        (640 * 480, 800),
        (1280 * 720, 1700),
    ]
    /// The budget for frames larger than every tier.
    public static let largestKbps = 2500

    /// The default maximum bitrate in kbit/s for a frame of this size.
    public static func kbps(width: Int, height: Int) -> Int {
        let pixels = width.multipliedReportingOverflow(by: height)
        guard !pixels.overflow else { return largestKbps }
        return tiers.first { pixels.partialValue <= $0.maxPixels }?.kbps ?? largestKbps
    }
}
