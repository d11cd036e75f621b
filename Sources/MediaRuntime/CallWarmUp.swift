import GStreamer

/// Loads what a call runs on before the first call of a process starts, instead of during it.
///
/// GStreamer loads a plugin when its first element is made, and some plugins do costly work
/// once per process when they are (DTLS makes its certificate, libnice and libsrtp initialise).
/// A process's first call made them while its media already flowed: in `ecv demo` on a loaded
/// 2-core machine (load average 6 to 13) the sender's media lagged as the transport came up, the
/// far end's lip sync moved a stream by as much at the first sender report, and the recording
/// showed that as a gap at the start of the first leg only (3 of 9 first legs, 0.43 to 0.45 s;
/// with this, 1 of 14, 0.23 s). Making one element of each kind once, and dropping it, moves
/// that work before the call. It costs about 0.4 s, and several seconds on a host whose cores
/// are all taken, so it is for a process that is about to call (`ecv demo`), not for every start.
package enum CallWarmUp {
    /// Transport, audio, and the recorder every call has.
    static let common = [
        "webrtcbin", "rtpbin", "nicesrc", "nicesink", "dtlssrtpenc", "dtlssrtpdec", "srtpenc", "srtpdec", "sctpenc", "sctpdec",
        "opusenc", "opusdec", "rtpopuspay", "rtpopusdepay", "matroskamux", "taginject", "appsrc", "appsink",
    ]

    /// A video codec's elements, both ways, software (the catalog's first choices on a host without hardware).
    static let video: [String: [String]] = [
        "VP8": ["vp8enc", "vp8dec", "rtpvp8pay", "rtpvp8depay"],
        "VP9": ["vp9enc", "vp9dec", "rtpvp9pay", "rtpvp9depay"],
        "H264": ["x264enc", "avdec_h264", "h264parse", "rtph264pay", "rtph264depay"],
    ]

    /// Makes and drops one element of each factory a call with `videoCodec` uses (a second time
    /// costs little: the plugins stay loaded). Returns the factories this host lacks (a missing
    /// element is no error here: the call that needs one reports it).
    @discardableResult
    package static func loadCallPlugins(videoCodec: String) throws(GStreamerError) -> [String] {
        try GStreamerRuntime.ensureInitialized()
        let wanted = common + (video[videoCodec.uppercased()] ?? [])
        return wanted.filter { factory in
            do throws(GStreamerError) {
                _ = try Element(factory: factory)
                return false
            } catch {
                return true
            }
        }
    }
}
