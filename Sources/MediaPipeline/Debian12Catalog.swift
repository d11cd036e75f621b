extension StaticCatalog {
    /// The software elements Debian 12 (GStreamer 1.22.0) provides once the packages listed in
    /// Package.swift are installed (plus gstreamer1.0-alsa for `alsasrc`/`alsasink`), with ranks
    /// and klasses as `gst-inspect-1.0` reports them there. No hardware encoders: compiling
    /// against this catalog gives what a plain Debian 12 server without GPU plugins gets.
    public static let debian12Software = StaticCatalog(debian12SoftwareEntries)

    private static let debian12SoftwareEntries: [CatalogEntry] = [
        // Sources
        .init(name: "videotestsrc", rank: 0, klass: "Source/Video"),
        .init(name: "audiotestsrc", rank: 0, klass: "Source/Audio"),
        .init(name: "v4l2src", rank: 256, klass: "Source/Video"),
        .init(name: "filesrc", rank: 256, klass: "Source/File"),
        .init(name: "multifilesrc", rank: 0, klass: "Source/File"),
        .init(name: "uridecodebin", rank: 0, klass: "Generic/Bin/Decoder"),
        .init(name: "decodebin", rank: 0, klass: "Generic/Bin/Decoder"),
        .init(name: "appsrc", rank: 0, klass: "Generic/Source"),
        .init(name: "pulsesrc", rank: 266, klass: "Source/Audio"),
        .init(name: "alsasrc", rank: 256, klass: "Source/Audio"),
        // Sinks
        .init(name: "appsink", rank: 0, klass: "Generic/Sink"),
        .init(name: "fakesink", rank: 0, klass: "Sink"),
        .init(name: "filesink", rank: 256, klass: "Sink/File"),
        .init(name: "autoaudiosink", rank: 0, klass: "Sink/Audio"),
        .init(name: "autovideosink", rank: 0, klass: "Sink/Video"),
        .init(name: "pulsesink", rank: 266, klass: "Sink/Audio"),
        .init(name: "alsasink", rank: 256, klass: "Sink/Audio"),
        // Raw video and audio plumbing
        .init(name: "videoconvert", rank: 64, klass: "Filter/Converter/Video/Colorspace"),
        .init(name: "videoscale", rank: 64, klass: "Filter/Converter/Video/Scaler"),
        .init(name: "videorate", rank: 0, klass: "Filter/Effect/Video"),
        .init(name: "videoflip", rank: 0, klass: "Filter/Effect/Video"),
        .init(name: "videobalance", rank: 0, klass: "Filter/Effect/Video"),
        .init(name: "audioconvert", rank: 256, klass: "Filter/Converter/Audio"),
        .init(name: "audioresample", rank: 256, klass: "Filter/Converter/Audio"),
        .init(name: "audiomixer", rank: 0, klass: "Generic/Audio"),
        .init(name: "volume", rank: 0, klass: "Filter/Effect/Audio"),
        .init(name: "input-selector", rank: 0, klass: "Generic"),
        .init(name: "queue", rank: 0, klass: "Generic"),
        .init(name: "capsfilter", rank: 0, klass: "Generic"),
        .init(name: "tee", rank: 0, klass: "Generic"),
        .init(name: "clocksync", rank: 0, klass: "Generic"),
        // Encoders, decoders, parsers
        .init(name: "vp8enc", rank: 256, klass: "Codec/Encoder/Video"),
        .init(name: "vp9enc", rank: 256, klass: "Codec/Encoder/Video"),
        .init(name: "x264enc", rank: 256, klass: "Codec/Encoder/Video"),
        .init(name: "openh264enc", rank: 64, klass: "Encoder/Video"),
        .init(name: "opusenc", rank: 256, klass: "Codec/Encoder/Audio"),
        .init(name: "vp8dec", rank: 256, klass: "Codec/Decoder/Video"),
        .init(name: "vp9dec", rank: 256, klass: "Codec/Decoder/Video"),
        .init(name: "avdec_h264", rank: 256, klass: "Codec/Decoder/Video"),
        .init(name: "openh264dec", rank: 64, klass: "Decoder/Video"),
        .init(name: "opusdec", rank: 256, klass: "Codec/Decoder/Audio/Converter"),
        .init(name: "h264parse", rank: 257, klass: "Codec/Parser/Converter/Video"),
        .init(name: "vp9parse", rank: 128, klass: "Codec/Parser/Converter/Video"),
        .init(name: "opusparse", rank: 0, klass: "Codec/Parser/Audio"),
        // RTP
        .init(name: "rtpvp8pay", rank: 64, klass: "Codec/Payloader/Network/RTP"),
        .init(name: "rtpvp9pay", rank: 64, klass: "Codec/Payloader/Network/RTP"),
        .init(name: "rtph264pay", rank: 128, klass: "Codec/Payloader/Network/RTP"),
        .init(name: "rtpopuspay", rank: 256, klass: "Codec/Payloader/Network/RTP"),
        .init(name: "rtpvp8depay", rank: 64, klass: "Codec/Depayloader/Network/RTP"),
        .init(name: "rtpvp9depay", rank: 64, klass: "Codec/Depayloader/Network/RTP"),
        .init(name: "rtph264depay", rank: 128, klass: "Codec/Depayloader/Network/RTP"),
        .init(name: "rtpopusdepay", rank: 256, klass: "Codec/Depayloader/Network/RTP"),
        // Audio processing
        .init(name: "webrtcdsp", rank: 0, klass: "Generic/Audio"),
        .init(name: "webrtcechoprobe", rank: 0, klass: "Generic/Audio"),
        // Recording
        .init(name: "matroskamux", rank: 256, klass: "Codec/Muxer"),
        .init(name: "webmmux", rank: 256, klass: "Codec/Muxer"),
        .init(name: "mp4mux", rank: 256, klass: "Codec/Muxer"),
        .init(name: "splitmuxsink", rank: 0, klass: "Generic/Bin/Muxer"),
        // WebRTC and measurement
        .init(name: "webrtcbin", rank: 256, klass: "Filter/Network/WebRTC"),
        .init(name: "simplevideomark", rank: 0, klass: "Filter/Effect/Video"),
        .init(name: "simplevideomarkdetect", rank: 0, klass: "Filter/Effect/Video"),
    ]
}
