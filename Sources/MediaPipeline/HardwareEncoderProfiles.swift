/// Hardware encoders, in the fixed preference order used to break rank ties.
///
/// Property names and units are from each plugin's 1.22 sources and documentation as best we
/// know them; none of this hardware exists on the development machine, so they are untested
/// here. Known uncertainties:
/// - `vavp8enc`/`vavp9enc` only exist from GStreamer 1.24 (1.22's `va` plugin encodes H.264/H.265
///   only); they are listed so a newer registry is used when present.
/// - v4l2 stateful encoders take codec controls through `extra-controls`; the control names
///   (`video_bitrate`, `video_bitrate_mode` 1 = CBR, `video_gop_size`, `h264_i_frame_period`) are
///   the kernel control names lowercased, and a driver ignores (with a warning) those it lacks.
/// - `nvv4l2h264enc` (Jetson, not Debian) takes NVMM memory, hence `nvvidconv` in front; its
///   `bitrate` is bit/s. Its rate-control enum nick is not pinned because it varies by L4T release.
extension VideoEncoderProfile {
    static let hardware: [VideoEncoderProfile] = [
        va("vah264enc", .h264), va("vah264lpenc", .h264),
        vaapi("vaapih264enc", .h264, extra: [NodeProperty("max-bframes", .uint(0))]),
        nvh264enc, qsv("qsvh264enc", .h264, extra: [NodeProperty("b-frames", .uint(0))]),
        v4l2("v4l2h264enc", .h264, gopControl: "h264_i_frame_period"), nvv4l2h264enc,
        va("vavp8enc", .vp8), vaapi("vaapivp8enc", .vp8), v4l2("v4l2vp8enc", .vp8, gopControl: "video_gop_size"),
        va("vavp9enc", .vp9), vaapi("vaapivp9enc", .vp9), qsv("qsvvp9enc", .vp9, extra: []),
        v4l2("v4l2vp9enc", .vp9, gopControl: "video_gop_size"),
    ]

    /// GStreamer's own VA-API plugin (gst-plugins-bad `va`): `bitrate` kbit/s, CBR,
    /// `target-usage` 7 = fastest.
    private static func va(_ factory: String, _ codec: VideoCodec) -> VideoEncoderProfile {
        VideoEncoderProfile(factory: factory, codec: codec, isHardware: true, bitrateProperty: "bitrate", unitsPerKbps: 1,
                            bitrateEncoding: .uint, properties: { settings in
            var properties = [NodeProperty("rate-control", .enumNick("cbr")), NodeProperty("target-usage", .uint(7)),
                              NodeProperty("key-int-max", .uint(UInt(settings.keyframeInterval)))]
            if codec == .h264 { properties.append(NodeProperty("b-frames", .uint(0))) }
            properties.append(NodeProperty("bitrate", .uint(UInt(settings.kbps))))
            return properties
        })
    }

    /// gstreamer-vaapi: `bitrate` kbit/s, `keyframe-period`, `quality-level` 7 = fastest.
    private static func vaapi(_ factory: String, _ codec: VideoCodec, extra: [NodeProperty] = []) -> VideoEncoderProfile {
        VideoEncoderProfile(factory: factory, codec: codec, isHardware: true, bitrateProperty: "bitrate", unitsPerKbps: 1,
                            bitrateEncoding: .uint, properties: { settings in
            [NodeProperty("rate-control", .enumNick("cbr")), NodeProperty("quality-level", .uint(7)),
             NodeProperty("keyframe-period", .uint(UInt(settings.keyframeInterval)))] + extra
                + [NodeProperty("bitrate", .uint(UInt(settings.kbps)))]
        })
    }

    /// NVENC (gst-plugins-bad `nvcodec`): `bitrate` kbit/s, low-latency preset, zero reorder delay.
    private static let nvh264enc = VideoEncoderProfile(
        factory: "nvh264enc", codec: .h264, isHardware: true, bitrateProperty: "bitrate", unitsPerKbps: 1,
        bitrateEncoding: .uint, properties: { settings in
            [NodeProperty("preset", .enumNick("low-latency-hp")), NodeProperty("rc-mode", .enumNick("cbr")),
             NodeProperty("zerolatency", .bool(true)), NodeProperty("bframes", .uint(0)),
             NodeProperty("gop-size", .int(settings.keyframeInterval)), NodeProperty("bitrate", .uint(UInt(settings.kbps)))]
        })

    /// Intel Quick Sync (gst-plugins-bad `qsv`): `bitrate` kbit/s, `target-usage` 7 = fastest.
    private static func qsv(_ factory: String, _ codec: VideoCodec, extra: [NodeProperty]) -> VideoEncoderProfile {
        VideoEncoderProfile(factory: factory, codec: codec, isHardware: true, bitrateProperty: "bitrate", unitsPerKbps: 1,
                            bitrateEncoding: .uint, properties: { settings in
            [NodeProperty("rate-control", .enumNick("cbr")), NodeProperty("target-usage", .uint(7)),
             NodeProperty("gop-size", .uint(UInt(settings.keyframeInterval)))] + extra
                + [NodeProperty("bitrate", .uint(UInt(settings.kbps)))]
        })
    }

    /// V4L2 stateful encoders (gst-plugins-good `video4linux2`): every codec control goes
    /// through the `extra-controls` structure, bitrate in bit/s.
    private static func v4l2(_ factory: String, _ codec: VideoCodec, gopControl: String) -> VideoEncoderProfile {
        VideoEncoderProfile(factory: factory, codec: codec, isHardware: true, bitrateProperty: "extra-controls", unitsPerKbps: 1000,
                            bitrateEncoding: .structureField(structure: "controls", field: "video_bitrate"), properties: { settings in
            [NodeProperty("extra-controls", .structure(
                "controls,video_bitrate_mode=1,\(gopControl)=\(settings.keyframeInterval),video_bitrate=\(settings.kbps * 1000)"))]
        })
    }

    /// NVIDIA Jetson's V4L2 encoder: `bitrate` bit/s, SPS/PPS before every IDR.
    private static let nvv4l2h264enc = VideoEncoderProfile(
        factory: "nvv4l2h264enc", codec: .h264, isHardware: true, bitrateProperty: "bitrate", unitsPerKbps: 1000,
        bitrateEncoding: .uint, upload: [UploadStep(factory: "nvvidconv", capsAfter: "video/x-raw(memory:NVMM),format=NV12")],
        properties: { settings in
            [NodeProperty("insert-sps-pps", .bool(true)), NodeProperty("iframeinterval", .uint(UInt(settings.keyframeInterval))),
             NodeProperty("bitrate", .uint(UInt(settings.kbps * 1000)))]
        })
}
