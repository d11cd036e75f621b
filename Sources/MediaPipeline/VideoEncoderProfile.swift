/// What the compiler knows about one video encoder element: how to configure it for low-latency
/// real-time calls and how its bitrate property is expressed.
struct VideoEncoderProfile: Sendable {
    /// The values a profile turns into properties.
    struct Settings {
        var kbps: Int
        /// Frames between forced keyframes.
        var keyframeInterval: Int
    }

    /// An element (plus optional caps) the encoder needs in front of it.
    struct UploadStep: Sendable {
        var factory: String
        var capsAfter: String?
    }

    var factory: String
    var codec: VideoCodec
    var isHardware: Bool
    var bitrateProperty: String
    var unitsPerKbps: Int
    var bitrateEncoding: BitrateControl.Encoding
    var upload: [UploadStep] = []
    /// Every property in render order, the bitrate one included (computed with `bitrateValue`).
    var properties: @Sendable (Settings) -> [NodeProperty]

    func bitrateControl(node: String, kbps: Int) -> BitrateControl {
        BitrateControl(node: node, property: bitrateProperty, unitsPerKbps: unitsPerKbps, encoding: bitrateEncoding, initialKbps: kbps)
    }

    func bitrateValue(_ kbps: Int) -> PropertyValue {
        bitrateControl(node: "", kbps: kbps).value(forKbps: kbps)
    }
}

extension VideoEncoderProfile {
    /// Software encoders in preference order per codec.
    static let software: [VideoEncoderProfile] = [vp8enc, vp9enc, x264enc, openh264enc]

    /// libvpx settings shared by VP8 and VP9: real-time deadline, CBR, no lookahead, error
    /// resilience, and libwebrtc's 1 s rate-control buffer instead of vpxenc's 6 s default
    /// (a large buffer lets keyframes overshoot and congest the uplink), and libwebrtc's frame
    /// dropping (`rc_dropframe_thresh` 30): content that cannot be squeezed into the target even at
    /// the coarsest quantizer (noise, or a rate cut hard by bandwidth adaptation) loses frames
    /// rather than overrunning the path. Key frames are held to three frames' budget
    /// (`max-intra-bitrate` 300 %, the floor of libwebrtc's `MaxIntraTarget`): an unbounded VP8
    /// key frame at 500 kbit/s is ten or more frames' worth, a burst that overflows a rate-capped
    /// path's queue, is lost, and is asked for again (measured under a 500 kbit/s tbf cap with a
    /// 100 ms queue: 3 of 16 calls froze the far end for over 1 s, none of 8 with the bound).
    /// No `threads`: on a 2-core
    /// machine extra threads tripled per-frame latency (latency tracer, 640×480: `cpu-used=16
    /// threads=2` 13.2 ms per frame against 4.1 ms single-threaded).
    private static func libvpx(cpuUsed: Int, _ settings: Settings) -> [NodeProperty] {
        [NodeProperty("deadline", .int(1)), NodeProperty("cpu-used", .int(cpuUsed)),
         NodeProperty("end-usage", .enumNick("cbr")), NodeProperty("lag-in-frames", .int(0)),
         NodeProperty("keyframe-max-dist", .int(settings.keyframeInterval)),
         NodeProperty("error-resilient", .enumNick("default")),
         NodeProperty("buffer-size", .int(1000)), NodeProperty("buffer-initial-size", .int(500)),
         NodeProperty("buffer-optimal-size", .int(600)), NodeProperty("dropframe-threshold", .int(30)),
         NodeProperty("max-intra-bitrate", .int(300)), NodeProperty("target-bitrate", .int(settings.kbps * 1000))]
    }

    /// cpu-used=-6: measured 4.1 ms p50 per 640x480 frame here, faster than 8 or 16.
    static let vp8enc = VideoEncoderProfile(
        factory: "vp8enc", codec: .vp8, isHardware: false, bitrateProperty: "target-bitrate", unitsPerKbps: 1000,
        bitrateEncoding: .int, properties: { libvpx(cpuUsed: -6, $0) })

    /// cpu-used=8: libvpx VP9's fastest real-time speed; measured here at 480x640 about
    /// 7.1 ms/frame against 8.4 ms (6) and 9.1 ms (-6).
    static let vp9enc = VideoEncoderProfile(
        factory: "vp9enc", codec: .vp9, isHardware: false, bitrateProperty: "target-bitrate", unitsPerKbps: 1000,
        bitrateEncoding: .int, properties: { libvpx(cpuUsed: 8, $0) })

    /// x264 `bitrate` is kbit/s. zerolatency disables lookahead and B-frames' delay; ultrafast
    /// measured 2.3 ms per 640x480 frame here.
    static let x264enc = VideoEncoderProfile(
        factory: "x264enc", codec: .h264, isHardware: false, bitrateProperty: "bitrate", unitsPerKbps: 1,
        bitrateEncoding: .uint, properties: { settings in
            [NodeProperty("tune", .enumNick("zerolatency")), NodeProperty("speed-preset", .enumNick("ultrafast")),
             NodeProperty("key-int-max", .uint(UInt(settings.keyframeInterval))), NodeProperty("bframes", .uint(0)),
             NodeProperty("bitrate", .uint(UInt(settings.kbps)))]
        })

    /// openh264's `bitrate` is bit/s. `rate-control=bitrate` alone does not hold it (measured here:
    /// 1.36 Mbit/s for a 0.6 Mbit/s target); with `enable-frame-skip` it lands within 10 %.
    static let openh264enc = VideoEncoderProfile(
        factory: "openh264enc", codec: .h264, isHardware: false, bitrateProperty: "bitrate", unitsPerKbps: 1000,
        bitrateEncoding: .uint, properties: { settings in
            [NodeProperty("usage-type", .enumNick("camera")), NodeProperty("complexity", .enumNick("low")),
             NodeProperty("rate-control", .enumNick("bitrate")), NodeProperty("enable-frame-skip", .bool(true)),
             NodeProperty("gop-size", .uint(UInt(settings.keyframeInterval))),
             NodeProperty("bitrate", .uint(UInt(settings.kbps * 1000)))]
        })
}
