import Foundation
import MediaPipeline

/// The encoded formats a call carries and a recorder can store without re-encoding.
package enum RecordedCodec: String, Sendable, Hashable, CaseIterable, Codable {
    case vp8 = "VP8"
    case vp9 = "VP9"
    case h264 = "H264"
    case opus = "OPUS"

    /// The codec of an RTP `encoding-name` (case-insensitive), or a clear error.
    package static func parse(encodingName: String) throws(RecordingError) -> RecordedCodec {
        guard let codec = RecordedCodec(rawValue: encodingName.uppercased()) else {
            throw .unsupportedCodec(codec: encodingName, format: nil,
                                    supported: allCases.map(\.rawValue))
        }
        return codec
    }

    package var kind: MediaKind { self == .opus ? .audio : .video }

    var clockRate: Int { self == .opus ? 48000 : 90000 }

    /// Caps an RTP appsrc starts with, before the real stream's caps (with payload type and
    /// SSRC) are known.
    var rtpCaps: String {
        "application/x-rtp,media=\(kind.rawValue),encoding-name=\(rawValue),clock-rate=\(clockRate),payload=\(self == .opus ? 111 : 96)"
    }

    var depayloader: String {
        switch self {
        case .vp8: "rtpvp8depay"
        case .vp9: "rtpvp9depay"
        case .h264: "rtph264depay"
        case .opus: "rtpopusdepay"
        }
    }

    /// Elements between the depayloader and a muxer, with the caps they must produce. H.264 is
    /// parsed into avc access units because Matroska and MP4 store SPS/PPS as codec data.
    var parserChain: [(factory: String, properties: [(String, String)])] {
        switch self {
        case .h264: [("h264parse", [("config-interval", "-1")]), ("capsfilter", [("caps", "video/x-h264,stream-format=avc,alignment=au")])]
        case .opus: []
        case .vp8, .vp9: []
        }
    }

    /// The decoder for re-encoding paths (composite, snapshots).
    var decoders: [String] {
        switch self {
        case .vp8: ["vp8dec"]
        case .vp9: ["vp9dec"]
        case .h264: ["avdec_h264", "openh264dec"]
        case .opus: ["opusdec"]
        }
    }
}

/// What a container means to the recorder: its muxer and the codecs it holds (the format itself is
/// a MediaPipeline value, which the SDK shows).
extension RecordingFormat {
    var muxerFactory: String {
        switch self {
        case .matroska: "matroskamux"
        case .webm: "webmmux"
        case .mp4: "mp4mux"
        }
    }

    package var supportedCodecs: [RecordedCodec] {
        switch self {
        case .matroska: [.vp8, .vp9, .h264, .opus]
        case .webm: [.vp8, .vp9, .opus]
        case .mp4: [.h264, .vp9, .opus]
        }
    }

    /// Whether markers also go into the file as a timed text track. WebM only allows WebVTT and
    /// MP4 text tracks stall `mp4mux` while they are sparse, so those formats keep markers in the
    /// chapters sidecar only.
    var carriesMarkerTrack: Bool { self == .matroska }

    /// Fragmented MP4 starts every track at its own first sample (`mp4mux` writes no edit list
    /// for a late track), so MP4 tracks are held back until all have data and start together;
    /// they start with whatever frame comes next, key frame or not. Matroska keeps each track's
    /// own start time and starts video at a key frame.
    var alignsTrackStarts: Bool { self == .mp4 }

    package func validate(_ codec: RecordedCodec) throws(RecordingError) {
        guard supportedCodecs.contains(codec) else {
            throw .unsupportedCodec(codec: codec.rawValue, format: self, supported: supportedCodecs.map(\.rawValue))
        }
    }
}

/// Who is who in a recording: track names are "<party> video" / "<party> audio", e.g.
/// "caller video" and "agent audio" on the agent's side.
package struct RecordingLabels: Sendable, Hashable {
    package var local: String
    package var remote: String

    package init(local: String = "local", remote: String = "remote") {
        self.local = local
        self.remote = remote
    }

    package func trackName(_ role: TrackRole) -> String {
        "\(role.isLocal ? local : remote) \(role.kind.rawValue)"
    }
}

/// One track to record: its role and the codec its RTP stream carries.
package struct RecordedTrack: Sendable, Hashable {
    package var role: TrackRole
    package var codec: RecordedCodec

    package init(_ role: TrackRole, codec: RecordedCodec) {
        self.role = role
        self.codec = codec
    }
}

/// How a recording behaves beyond its tracks.
package struct RecordingOptions: Sendable {
    /// Overwrite an existing file instead of refusing to start.
    package var replaceExisting: Bool
    /// The longest Matroska cluster (and MP4 fragment): a killed process loses at most this much
    /// plus what the kernel had not yet received, which unbuffered writes keep near zero.
    package var maxClusterDuration: Duration
    /// How long a declared track may stay without data before the file is written without it.
    /// Until every track has data the container header cannot be written, so the tracks that
    /// do flow wait (buffered) meanwhile.
    package var trackStartTimeout: Duration
    /// Memory allowed per track for data the writer has not taken yet (a stalled disk); beyond
    /// it the oldest data is dropped rather than ever slowing the call down.
    package var maxBufferedBytesPerTrack: UInt64
    /// Also write `<file>.stats.ndjson` from `record(stats:)` samples.
    package var writesStatsSidecar: Bool
    /// Also write `<file>.chapters.json` with marks and periods.
    package var writesChaptersSidecar: Bool

    package init(replaceExisting: Bool = false, maxClusterDuration: Duration = .seconds(1),
                trackStartTimeout: Duration = .seconds(15), maxBufferedBytesPerTrack: UInt64 = 64 << 20,
                writesStatsSidecar: Bool = true, writesChaptersSidecar: Bool = true) {
        self.replaceExisting = replaceExisting
        self.maxClusterDuration = maxClusterDuration
        self.trackStartTimeout = trackStartTimeout
        self.maxBufferedBytesPerTrack = maxBufferedBytesPerTrack
        self.writesStatsSidecar = writesStatsSidecar
        self.writesChaptersSidecar = writesChaptersSidecar
    }
}

extension RecordingOptions {
    func validate() throws(RecordingError) {
        guard maxClusterDuration >= .milliseconds(100), maxClusterDuration <= .seconds(60) else {
            throw .invalidOptions("maxClusterDuration must be between 100 ms and 60 s, not \(maxClusterDuration)")
        }
        guard trackStartTimeout > .zero else { throw .invalidOptions("trackStartTimeout must be positive, not \(trackStartTimeout)") }
        guard maxBufferedBytesPerTrack >= 1 << 20 else {
            throw .invalidOptions("maxBufferedBytesPerTrack must be at least 1 MiB, not \(maxBufferedBytesPerTrack) bytes")
        }
    }
}

