import Foundation

/// Which stream of a call a recorded track holds. A file has at most one track per role, and a
/// role keeps its track when its source is replaced (a peer rebuild brings a new RTP tee).
public enum TrackRole: String, Sendable, Hashable, CaseIterable, Codable {
    case localVideo, localAudio, remoteVideo, remoteAudio

    public var kind: MediaKind {
        switch self {
        case .localVideo, .remoteVideo: .video
        case .localAudio, .remoteAudio: .audio
        }
    }

    public var isLocal: Bool { self == .localVideo || self == .localAudio }

    /// The role of a stream of `kind` sent (`local`) or received by this side.
    public static func of(_ kind: MediaKind, local: Bool) -> TrackRole {
        switch (kind, local) {
        case (.video, true): .localVideo
        case (.audio, true): .localAudio
        case (.video, false): .remoteVideo
        case (.audio, false): .remoteAudio
        }
    }
}

/// The container a recording is written in.
public enum RecordingFormat: String, Sendable, Hashable, CaseIterable {
    /// `matroskamux`: every codec a call uses, a timed "markers" subtitle track, clusters of at
    /// most one second so a killed process leaves a file that plays.
    case matroska
    /// `webmmux`: VP8/VP9 and Opus only (the WebM profile of Matroska).
    case webm
    /// Fragmented MP4 (`mp4mux fragment-duration=1000`): H.264/VP9 and Opus; `mp4mux` in
    /// GStreamer 1.22 has no VP8 and there is no `isofmp4mux` (gst-plugins-rs).
    case mp4

    public var fileExtension: String {
        switch self {
        case .matroska: "mkv"
        case .webm: "webm"
        case .mp4: "mp4"
        }
    }
}

/// A mark or a period (hold, transfer, mute) on the recording's media timeline, in seconds.
public struct RecordingChapter: Sendable, Hashable, Codable {
    public enum Kind: String, Sendable, Hashable, Codable { case mark, period }
    public var kind: Kind
    public var label: String
    public var start: Double
    /// The end of a period; nil for marks and for a period still open.
    public var end: Double?

    package init(kind: Kind, label: String, start: Double, end: Double?) {
        self.kind = kind
        self.label = label
        self.start = start
        self.end = end
    }
}

/// What a finished recording holds.
public struct RecordingSummary: Sendable {
    public var url: URL
    public var format: RecordingFormat
    /// Media time from start to stop.
    public var duration: Duration
    /// Where the file's timeline begins on the media timeline (`CallRecorder.fileStart`).
    public var fileStart: Duration
    /// The roles whose tracks are in the file.
    public var tracks: Set<TrackRole>
    /// Declared roles left out of the file, with the reason.
    public var droppedTracks: [TrackRole: String]
    public var chapters: [RecordingChapter]
    public var chaptersURL: URL?
    public var statsURL: URL?
    /// What went wrong without spoiling the file (`CallRecorder.problems`).
    public var problems: [String]

    package init(url: URL, format: RecordingFormat, duration: Duration, fileStart: Duration, tracks: Set<TrackRole>,
                 droppedTracks: [TrackRole: String], chapters: [RecordingChapter], chaptersURL: URL?, statsURL: URL?, problems: [String]) {
        self.url = url
        self.format = format
        self.duration = duration
        self.fileStart = fileStart
        self.tracks = tracks
        self.droppedTracks = droppedTracks
        self.chapters = chapters
        self.chaptersURL = chaptersURL
        self.statsURL = statsURL
        self.problems = problems
    }
}

/// How a call is laid out in its recording.
public enum RecordingLayout: Sendable, Hashable {
    /// Each party's video and audio as a track of its own, as sent (no re-encoding), with hold,
    /// mute and transfer periods as chapters and a stats sidecar. Any format.
    case separateTracks
    /// One picture, re-encoded: the agent full-frame at the size its picture arrives in, the
    /// caller inset in a corner with its own shape, both voices mixed; VP8 and Opus, so WebM or
    /// Matroska (not MP4). No chapters.
    case pictureInPicture
}
