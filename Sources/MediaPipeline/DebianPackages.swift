/// Which Debian 12 package provides an element, so "missing element" errors say what to install.
public enum DebianPackages {
    /// The package for a factory name, or a hint when the element does not come from Debian.
    public static func package(for factory: String) -> String {
        if let package = byFactory[factory] { return package }
        if factory.hasPrefix("vaapi") { return "gstreamer1.0-vaapi" }
        if factory.hasPrefix("va") || (factory.hasPrefix("nv") && !factory.hasPrefix("nvv4l2")) || factory.hasPrefix("qsv") {
            return "gstreamer1.0-plugins-bad"
        }
        if factory.hasPrefix("nvv4l2") || factory == "nvvidconv" { return "NVIDIA L4T multimedia (not packaged by Debian)" }
        if factory.hasPrefix("v4l2") { return "gstreamer1.0-plugins-good" }
        if factory.hasPrefix("avdec_") { return "gstreamer1.0-libav" }
        return "an unknown package (not part of Debian 12's GStreamer 1.22)"
    }

    private static let core = "libgstreamer1.0-0"
    private static let base = "gstreamer1.0-plugins-base"
    private static let good = "gstreamer1.0-plugins-good"
    private static let bad = "gstreamer1.0-plugins-bad"
    private static let ugly = "gstreamer1.0-plugins-ugly"

    private static let byFactory: [String: String] = {
        var table: [String: String] = [:]
        for name in ["queue", "capsfilter", "tee", "input-selector", "clocksync", "fakesink", "filesrc", "filesink", "identity"] {
            table[name] = core
        }
        for name in ["videotestsrc", "audiotestsrc", "videoconvert", "videoscale", "videorate", "audioconvert",
                     "audioresample", "audiomixer", "volume", "appsrc", "appsink", "decodebin", "uridecodebin",
                     "opusenc", "opusdec"] {
            table[name] = base
        }
        for name in ["vp8enc", "vp9enc", "vp8dec", "vp9dec", "rtpvp8pay", "rtpvp9pay", "rtph264pay", "rtpopuspay",
                     "rtpvp8depay", "rtpvp9depay", "rtph264depay", "rtpopusdepay", "videobalance", "videoflip",
                     "v4l2src", "multifilesrc", "pulsesrc", "pulsesink", "autoaudiosink", "autovideosink",
                     "matroskamux", "webmmux", "mp4mux", "splitmuxsink"] {
            table[name] = good
        }
        for name in ["webrtcdsp", "webrtcechoprobe", "openh264enc", "openh264dec", "h264parse", "vp9parse",
                     "opusparse", "webrtcbin", "simplevideomark", "simplevideomarkdetect"] {
            table[name] = bad
        }
        table["x264enc"] = ugly
        table["alsasrc"] = "gstreamer1.0-alsa"
        table["alsasink"] = "gstreamer1.0-alsa"
        return table
    }()
}
