/// An RTP stream the graph produces, to be linked to a `webrtcbin` sink pad.
public struct GraphOutput: Sendable, Hashable {
    public var kind: MediaKind
    /// The payloader whose `src` pad carries the stream.
    public var node: String
    public var pad: String
    /// "VP8", "VP9", "H264" or "OPUS".
    public var encodingName: String
    public var payloadType: Int
    public var clockRate: Int
    /// The caps to give webrtcbin (transceiver `codec-preferences`): media, encoding name,
    /// payload type and clock rate only. H.264's `packetization-mode` and `profile-level-id`
    /// come from the payloader's own caps (they depend on the SPS), so they are not pinned here.
    public var rtpCaps: String {
        "application/x-rtp,media=\(kind.rawValue),encoding-name=\(encodingName),payload=\(payloadType),clock-rate=\(clockRate)"
    }
}

/// How to change an encoder's bitrate while it runs, in the encoder's own unit.
public struct BitrateControl: Sendable, Hashable {
    /// How the new value is written.
    public enum Encoding: Sendable, Hashable {
        /// A gint property (vp8enc `target-bitrate`, opusenc `bitrate`).
        case int
        /// A guint property (x264enc, openh264enc, VA/NVENC/QSV `bitrate`).
        case uint
        /// A GstStructure property holding the value in one field (v4l2 `extra-controls`,
        /// `controls,video_bitrate=<bit/s>`). Setting it in PLAYING re-applies the controls.
        case structureField(structure: String, field: String)
    }

    public var node: String
    public var property: String
    /// Property units per kbit/s: 1000 for bit/s properties, 1 for kbit/s ones.
    public var unitsPerKbps: Int
    public var encoding: Encoding
    /// The bitrate the graph starts with, in kbit/s (nil = the encoder's own default).
    public var initialKbps: Int?

    /// The exact property value that sets the bitrate to `kbps` kbit/s.
    public func value(forKbps kbps: Int) -> PropertyValue {
        let units = max(0, kbps) * unitsPerKbps
        switch encoding {
        case .int: return .int(units)
        case .uint: return .uint(UInt(units))
        case .structureField(let structure, let field): return .structure("\(structure),\(field)=\(units)")
        }
    }
}

/// Property values that mute and unmute a node in place, so media keeps flowing while muted.
public struct MuteControl: Sendable, Hashable {
    public var node: String
    public var muted: [NodeProperty]
    public var unmuted: [NodeProperty]
}

/// Front/back camera switching as a pad switch on an `input-selector` (no renegotiation).
public struct CameraSwitch: Sendable, Hashable {
    /// The `input-selector` node.
    public var selector: String
    /// Input name ("front", "back") → the selector's sink pad it is linked to ("sink_0").
    public var pads: [String: String]
    /// The input that is active when the graph starts (the selector's first pad).
    public var initial: String
}

/// A file source the runtime must loop.
///
/// gst-launch cannot loop a demuxed file (`multifilesrc loop=true` re-reads raw bytes, which breaks
/// containers), so the graph only marks it and the runtime loops with segment seeks: before
/// PLAYING it sends a flushing seek with `GST_SEEK_FLAG_SEGMENT` via `gst_element_send_event` on
/// `seekTarget` (an ordinary element, so the seek travels upstream from its src pad into the
/// demuxer), and on each `SEGMENT_DONE` posted from inside `decoder` a non-flushing segment seek
/// back to 0. Running time keeps increasing across loops, so `clocksync` and the encoder see one
/// continuous stream. A file that is not looped ends its branch with EOS.
public struct FileLoop: Sendable, Hashable {
    public var kind: MediaKind
    /// The `filesrc` node.
    public var source: String
    /// The `decodebin` node; `SEGMENT_DONE` messages come from elements inside it.
    public var decoder: String
    /// The `clocksync` right after `decoder`; send the seeks to it.
    public var seekTarget: String
}
