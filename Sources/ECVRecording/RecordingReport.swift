import Foundation
import MediaPipeline
import MediaRuntime

/// What a reviewer wants to know about a recording before playing it: who is in it, for how long,
/// its chapters, its transport quality, where the media stops, and one verdict. Built from the
/// file itself (`RecordingInspector`, `ContainerScanner`) and its sidecars; `--json` prints it.
public struct RecordingReport: Sendable, Codable {
    public struct TrackReport: Sendable, Codable, Hashable {
        /// "caller video", from the track's title; the demuxer's pad name when it has none.
        public var name: String
        /// The file has no title for this track and `name` follows ECVKit's track order (each
        /// party's video right before its audio): a killed Matroska recording can lose video titles.
        public var nameInferred: Bool = false
        /// "caller", "agent", "local", …; nil for an untitled track.
        public var party: String?
        /// "video", "audio" or "text".
        public var kind: String
        /// "VP8", "VP9", "H264", "OPUS", or the caps' media type for anything else.
        public var codec: String
        public var width: Int?
        public var height: Int?
        public var frames: Int
        public var keyFrames: Int
        public var bytes: Int
        public var firstTime: Double?
        public var lastTime: Double?
    }

    /// A stretch where a track shows nothing new.
    public struct Gap: Sendable, Codable, Hashable {
        public enum Reason: String, Sendable, Codable {
            /// No frame for longer than the gap threshold (measured from the frames' times).
            case noFrames = "no frames"
            /// A "<party> <kind> muted" chapter: the call sent black frames or silence at full rate.
            case muted
        }
        public var track: String
        public var start: Double
        public var end: Double
        public var reason: Reason
        public var duration: Double { end - start }
    }

    public struct Spread: Sendable, Codable, Hashable {
        public var min: Double
        public var median: Double
        public var max: Double

        init?(_ values: [Double]) {
            let sorted = values.filter(\.isFinite).sorted()
            guard let first = sorted.first, let last = sorted.last else { return nil }
            let middle = sorted.count / 2
            min = first
            max = last
            median = sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
        }
    }

    public struct DirectionSummary: Sendable, Codable, Hashable {
        public var direction: String
        public var samples: Int
        /// Bits per second.
        public var bitrate: Spread?
        public var framesPerSecond: Spread?
        /// Seconds.
        public var roundTripTime: Spread?
        /// Packets lost while recording (the cumulative counter's rise).
        public var packetsLost: Int?
        /// Milliseconds, audio minus video, of when the streams were played out (and recorded)
        /// against when the sender captured them, from its RTCP sender reports: positive when the
        /// audio is late. ECVKit writes it for the received direction.
        public var audioVideoOffsetMs: Spread?
    }

    /// Where one party's audio and video begin on the file's timeline.
    public struct AudioVideoMapping: Sendable, Codable, Hashable {
        public var party: String
        public var videoStart: Double
        public var audioStart: Double
        /// Audio's first timestamp minus video's, in milliseconds.
        public var startOffsetMs: Double { (audioStart - videoStart) * 1000 }
    }

    public struct StatsSummary: Sendable, Codable, Hashable {
        public var samples: Int
        public var unreadableLines: Int
        public var directions: [DirectionSummary]
    }

    /// The one judgement of a recording, the same for `ecv inspect` (its exit status), `ecv demo`
    /// and apps: `complete`, or each finding with its details.
    public struct Verdict: Sendable, Codable, Hashable {
        public enum Finding: String, Sendable, Codable {
            case complete
            /// At least one stretch of a video or audio track without frames (not a mute).
            case gaps
            /// Fewer than two parties have media, or a track has no frames.
            case partyMissing = "party missing"
            /// The container was not finalised (a recorder killed mid-call).
            case cutShort = "cut short"
            /// A track with far fewer frames or packets than the recording's span needs.
            case sparse
            /// The stats sidecar's median audio/video offset is outside ITU-R BT.1359's
            /// detectability window (audio more than 45 ms early or 125 ms late).
            case outOfSync = "out of sync"
        }
        public var findings: [Finding]
        /// Each finding with its details, in words.
        public var details: [String]
        /// One line: "complete", or the details.
        public var text: String { details.joined(separator: "; ") }
        /// Nothing to report: the exit status 0 of `ecv inspect`.
        public var isComplete: Bool { findings == [.complete] }

        /// Fewest frames or packets per second over the recording's span for a track not to be
        /// sparse: Opus sends 50 packets a second (8 at its longest 120 ms frames); a live
        /// picture at least one frame a second. Muted stretches count: a mute sends silence or
        /// black frames at full rate.
        public static let minimumRate: [String: Double] = ["audio": 5, "video": 1]
        /// Spans shorter than this (seconds) are too short to judge a rate.
        public static let shortestSpan = 1.0
        /// The audio/video offsets (ms, positive: audio late) a viewer does not notice (ITU-R BT.1359).
        public static let inSync: ClosedRange<Double> = -45...125
    }

    public var file: String
    public var fileBytes: Int
    /// The end of the latest media frame on the file's timeline, seconds.
    public var duration: Double
    public var tracks: [TrackReport]
    public var chapters: [RecordingChapter]
    /// "chapters sidecar", "markers track" or "none".
    public var chaptersFrom: String
    public var stats: StatsSummary?
    /// Each party with both audio and video: where each begins.
    public var audioVideo: [AudioVideoMapping]
    /// Why a sidecar present next to the file could not be used.
    public var sidecarProblems: [String]
    public var gaps: [Gap]
    /// Frames further apart than this (seconds) make a gap.
    public var gapThreshold: Double
    public var integrity: ContainerIntegrity
    /// Why the demuxer stopped before the end, or left a track unread, when it did.
    public var readProblem: String?
    public var verdict: Verdict

    /// The parties with media in the file, in track order.
    public var parties: [String] {
        var seen: [String] = []
        for track in tracks where track.kind != "text" && track.frames > 0 {
            if let party = track.party, !seen.contains(party) { seen.append(party) }
        }
        return seen
    }
}

extension RecordingReport {
    init(url: URL, info: RecordedFileInfo, integrity: ContainerIntegrity, statsLines: [StatsLine]?, unreadableStats: Int,
         chapters: [RecordingChapter], chaptersFrom: String, sidecarProblems: [String], gapThreshold: Double) {
        self.gapThreshold = gapThreshold
        file = url.path
        // The inspection has just scanned and demuxed this file: only one removed since reads as 0 bytes.
        fileBytes = ((try? FileManager.default.attributesOfItem(atPath: url.path))?[.size] as? Int) ?? 0
        tracks = Self.inferringVideoNames(info.tracks.map(Self.trackReport))
        duration = info.tracks.filter { !$0.isText }.compactMap(\.lastTime).max() ?? 0
        self.chapters = chapters
        self.chaptersFrom = chaptersFrom
        self.sidecarProblems = sidecarProblems
        self.integrity = integrity
        readProblem = info.readProblem
        stats = statsLines.map { Self.summary($0, unreadable: unreadableStats) }
        audioVideo = Self.mappings(tracks)
        var gaps: [Gap] = []
        for (track, report) in zip(info.tracks, tracks) where !track.isText {
            gaps += track.gaps.map { Gap(track: report.name, start: $0.start, end: $0.end, reason: .noFrames) }
            for chapter in chapters where chapter.kind == .period && chapter.label == "\(report.name) muted" {
                gaps.append(Gap(track: report.name, start: chapter.start, end: chapter.end ?? duration, reason: .muted))
            }
        }
        self.gaps = gaps.sorted { ($0.start, $0.track) < ($1.start, $1.track) }
        verdict = Verdict(findings: [], details: [])
        verdict = judge()
    }

    private static func trackReport(_ track: RecordedFileInfo.Track) -> TrackReport {
        let kind = track.isVideo ? "video" : track.isAudio ? "audio" : track.isText ? "text" : track.mediaType
        let codec = switch track.mediaType {
        case "video/x-vp8": "VP8"
        case "video/x-vp9": "VP9"
        case "video/x-h264": "H264"
        case "audio/x-opus": "OPUS"
        case let other: other
        }
        var party: String?
        if let title = track.title, title.hasSuffix(" " + kind) { party = String(title.dropLast(kind.count + 1)) }
        return TrackReport(name: track.title ?? track.pad, party: party, kind: kind, codec: codec,
                           width: capsInteger("width", in: track.caps), height: capsInteger("height", in: track.caps),
                           frames: track.frames, keyFrames: track.keyFrames, bytes: track.bytes,
                           firstTime: track.firstTime, lastTime: track.lastTime)
    }

    /// Names an untitled video track after the titled audio track right after it, when that
    /// party has no video track of its own.
    private static func inferringVideoNames(_ tracks: [TrackReport]) -> [TrackReport] {
        var tracks = tracks
        for index in tracks.indices.dropLast() where tracks[index].kind == "video" && tracks[index].party == nil {
            let next = tracks[index + 1]
            guard next.kind == "audio", let party = next.party, !tracks.contains(where: { $0.kind == "video" && $0.party == party }) else {
                continue
            }
            tracks[index].name = "\(party) video"
            tracks[index].party = party
            tracks[index].nameInferred = true
        }
        return tracks
    }

    private static func capsInteger(_ field: String, in caps: String) -> Int? {
        guard let range = caps.range(of: "\(field)=(int)") else { return nil }
        return Int(caps[range.upperBound...].prefix { $0.isNumber })
    }

    private static func summary(_ lines: [StatsLine], unreadable: Int) -> StatsSummary {
        let directions = [DirectionStats.Direction.sent, .received].compactMap { direction -> DirectionSummary? in
            let samples = lines.filter { $0.direction == direction }
            guard !samples.isEmpty else { return nil }
            let lost = samples.compactMap(\.packetsLost)
            return DirectionSummary(direction: direction.rawValue, samples: samples.count, bitrate: Spread(samples.compactMap(\.bitrate)),
                                    framesPerSecond: Spread(samples.compactMap(\.fps)), roundTripTime: Spread(samples.compactMap(\.roundTripTime)),
                                    packetsLost: lost.last.map { max(0, $0 - (lost.first ?? 0)) },
                                    audioVideoOffsetMs: Spread(samples.compactMap(\.avOffsetMs)))
        }
        return StatsSummary(samples: lines.count, unreadableLines: unreadable, directions: directions)
    }

    /// Per party with an audio and a video track that have frames, where each begins.
    private static func mappings(_ tracks: [TrackReport]) -> [AudioVideoMapping] {
        var seen: [String] = []
        for track in tracks where track.kind != "text" && track.frames > 0 {
            if let party = track.party, !seen.contains(party) { seen.append(party) }
        }
        return seen.compactMap { party in
            let own = tracks.filter { $0.party == party && $0.frames > 0 }
            guard let video = own.first(where: { $0.kind == "video" })?.firstTime,
                  let audio = own.first(where: { $0.kind == "audio" })?.firstTime else { return nil }
            return AudioVideoMapping(party: party, videoStart: video, audioStart: audio)
        }
    }

    /// The media tracks with fewer frames or packets than the span from the first to the last
    /// media frame needs (`Verdict.minimumRate`): one audio packet in a 3 s call has no gap
    /// between frames, yet the call is not in the file. Tracks without frames are a party missing.
    private func sparseTracks() -> [String] {
        let media = tracks.filter { $0.kind == "audio" || $0.kind == "video" }
        guard let start = media.compactMap(\.firstTime).min(), let end = media.compactMap(\.lastTime).max(),
              end - start >= Verdict.shortestSpan else { return [] }
        let span = end - start
        return media.compactMap { track in
            guard track.frames > 0, let minimum = Verdict.minimumRate[track.kind], Double(track.frames) / span < minimum else { return nil }
            let unit = track.kind == "audio" ? "packet" : "frame"
            return String(format: "%@: %d %@%@ in %.1f s, at least %.0f a second expected", track.name, track.frames, unit,
                          track.frames == 1 ? "" : "s", span, minimum)
        }
    }

    private func judge() -> Verdict {
        var findings: [Verdict.Finding] = []
        var details: [String] = []
        if !integrity.isFinalised {
            findings.append(.cutShort)
            details.append("cut short (" + integrity.missing.joined(separator: ", ") + String(format: "; plays to %.1f s)", duration))
        }
        let media = tracks.filter { $0.kind == "video" || $0.kind == "audio" }
        let empty = media.filter { $0.frames == 0 }.map(\.name)
        // Untitled tracks (MP4, files from elsewhere): a party per track of the commoner kind.
        let flowing = media.filter { $0.frames > 0 }
        let untitledParties = max(flowing.filter { $0.kind == "video" }.count, flowing.filter { $0.kind == "audio" }.count)
        let partyCount = media.contains { $0.party != nil } ? parties.count : untitledParties
        if partyCount < 2 || !empty.isEmpty {
            findings.append(.partyMissing)
            var words = partyCount == 0 ? ["no track has media"] : partyCount > 1 ? []
                : parties.count == 1 ? ["only \(parties.joined()) is in the file"] : ["one party's tracks only"]
            if !empty.isEmpty { words.append(empty.joined(separator: ", ") + " without frames") }
            details.append("a party missing (" + words.joined(separator: "; ") + ")")
        }
        let dropouts = gaps.filter { $0.reason == .noFrames }
        if !dropouts.isEmpty {
            findings.append(.gaps)
            let longest = dropouts.map(\.duration).max() ?? 0
            details.append(String(format: "gaps (%d, the longest %.2f s, in %@)", dropouts.count, longest,
                                  Set(dropouts.map(\.track)).sorted().joined(separator: ", ")))
        }
        let sparse = sparseTracks()
        if !sparse.isEmpty {
            findings.append(.sparse)
            details.append("sparse (" + sparse.joined(separator: "; ") + ")")
        }
        let offsets = (stats?.directions ?? []).compactMap { direction in direction.audioVideoOffsetMs.map { (direction.direction, $0.median) } }
        let outOfSync = offsets.filter { !Verdict.inSync.contains($0.1) }
        if !outOfSync.isEmpty {
            findings.append(.outOfSync)
            details.append("out of sync (" + outOfSync.map { String(format: "%@ audio %.0f ms %@ its video at the median", $0.0, abs($0.1),
                                                                             $0.1 > 0 ? "after" : "before") }.joined(separator: "; ") + ")")
        }
        if findings.isEmpty { return Verdict(findings: [.complete], details: ["complete"]) }
        return Verdict(findings: findings, details: details)
    }
}
