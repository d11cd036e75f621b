/// The video codecs a call can send, with their RTP facts.
public enum VideoCodec: String, Sendable, Hashable, CaseIterable {
    case vp8 = "VP8"
    case vp9 = "VP9"
    case h264 = "H264"

    /// Dynamic payload type for every video codec: a call sends exactly one video codec, and a
    /// fixed number keeps SDP, goldens and captures comparable. 96 is the first dynamic PT.
    public static let payloadType = 96
    public static let clockRate = 90000

    /// The codec named by a `MediaParameters.videoCodec` string (case-insensitive), or an error
    /// saying why it cannot be used.
    public static func parse(_ name: String) throws(PipelineCompileError) -> VideoCodec {
        let upper = name.uppercased()
        if let codec = VideoCodec(rawValue: upper) { return codec }
        let supported = allCases.map(\.rawValue)
        switch upper {
        case "AV1":
            throw .videoCodecUnavailable(asked: name, reason: "GStreamer 1.22 has no RTP payloader or depayloader for AV1 (rtpav1pay only exists in the newer gst-plugins-rs)", supported: supported)
        case "H265", "HEVC":
            throw .videoCodecUnavailable(asked: name, reason: "WebRTC peers (browsers, the ECV agent desktop) do not negotiate H.265", supported: supported)
        default:
            throw .unknownVideoCodec(asked: name, supported: supported)
        }
    }

    var payloader: String {
        switch self {
        case .vp8: "rtpvp8pay"
        case .vp9: "rtpvp9pay"
        case .h264: "rtph264pay"
        }
    }

    var depayloader: String {
        switch self {
        case .vp8: "rtpvp8depay"
        case .vp9: "rtpvp9depay"
        case .h264: "rtph264depay"
        }
    }
}

/// The audio codecs a call can send.
public enum AudioCodec: String, Sendable, Hashable, CaseIterable {
    case opus = "OPUS"

    /// Opus's conventional dynamic payload type in WebRTC (Chrome and libwebrtc use 111), so SDP
    /// from our side looks like what agent desktops already see.
    public static let payloadType = 111
    public static let clockRate = 48000
    /// opusenc's accepted bitrate range, in kbit/s (its `bitrate` is 4000…650000 bit/s).
    public static let bitrateRangeKbps: ClosedRange<Int> = 4...650

    public static func parse(_ name: String) throws(PipelineCompileError) -> AudioCodec {
        let upper = name.uppercased()
        if let codec = AudioCodec(rawValue: upper) { return codec }
        let supported = allCases.map(\.rawValue)
        if upper == "ISAC" {
            throw .audioCodecUnavailable(asked: name, reason: "GStreamer has no iSAC encoder or payloader (iSAC only exists inside libwebrtc, which also dropped it in 2023)", supported: supported)
        }
        throw .unknownAudioCodec(asked: name, supported: supported)
    }
}
