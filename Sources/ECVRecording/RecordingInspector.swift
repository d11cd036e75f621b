import Foundation
import GLibCore
import GStreamer
import Synchronization

/// What a recorded file holds, read back by demuxing it to the end: per track (in file order) its
/// format, name, how many frames it has, the times of the first and last one and the gaps between.
/// It reads files that were never finalised (a killed recorder) too, as long as they play.
public struct RecordedFileInfo: Sendable {
    public struct Track: Sendable {
        /// The demuxer's pad name, e.g. "video_0", "audio_1", "subtitle_0".
        public var pad: String
        /// The track's place in the file (the order the demuxer announced the tracks in).
        public var order: Int = 0
        public var caps: String
        public var frames: Int
        public var keyFrames: Int
        /// Seconds on the file's timeline.
        public var firstTime: Double?
        public var lastTime: Double?
        /// The longest stretch without a frame between the first and the last one, in seconds.
        public var longestGap: Double = 0
        /// The track's name in the file ("caller video"), from its title tag; nil when it has none.
        public var title: String?
        /// Bytes of encoded data.
        public var bytes: Int = 0
        /// Stretches between consecutive frames longer than the inspection's gap threshold (not for text tracks).
        public var gaps: [TimeRange] = []
        /// The texts of a text track (the markers track), with their times in seconds.
        public var texts: [TimedText]

        public var mediaType: String { String(caps.prefix { $0 != "," }) }
        public var isVideo: Bool { mediaType.hasPrefix("video/") }
        public var isAudio: Bool { mediaType.hasPrefix("audio/") }
        public var isText: Bool { mediaType.hasPrefix("text/") }
    }

    public struct TimeRange: Sendable, Hashable, Codable {
        public var start: Double
        public var end: Double
        public var duration: Double { end - start }
    }

    public struct TimedText: Sendable, Hashable {
        public var time: Double
        public var text: String
    }

    public var tracks: [Track]
    /// Why reading stopped before the end of the file, or left a track unread, when it did (the
    /// tracks hold what was read).
    public var readProblem: String?
    public var videoTracks: [Track] { tracks.filter(\.isVideo) }
    public var audioTracks: [Track] { tracks.filter(\.isAudio) }
    public var textTracks: [Track] { tracks.filter(\.isText) }
    /// The latest frame time of any track, in seconds.
    public var lastTime: Double? { tracks.compactMap(\.lastTime).max() }
}

public enum RecordingInspector {
    /// Most gaps listed per track; a track that stutters all along says so with the first ones.
    static let maxGapsPerTrack = 500

    /// Demuxes `url` (Matroska, WebM or MP4, told by its first bytes, not its name) as fast as
    /// possible and counts frames. Frames further apart than `gapThreshold` seconds are listed as
    /// gaps. A file that stops reading part-way (cut short), or with a track that could not be
    /// read, gives what was read with `readProblem` set; one where nothing could be read throws.
    public static func inspect(_ url: URL, gapThreshold: Double = 0.2,
                               timeout: Duration = .seconds(60)) async throws(RecordingReviewError) -> RecordedFileInfo {
        try await inspect(url, gapThreshold: gapThreshold, timeout: timeout, observe: nil)
    }

    /// `inspect`, with `observe` seeing every sample with its pad's name (on the streaming
    /// thread), for callers that pick frames (the contact sheet).
    static func inspect(_ url: URL, gapThreshold: Double = 0.2, timeout: Duration,
                        observe: (@Sendable (String, Sample) -> Void)?) async throws(RecordingReviewError) -> RecordedFileInfo {
        guard FileManager.default.isReadableFile(atPath: url.path) else { throw .cannotRead(path: url.path, reason: "no such readable file") }
        let demuxer: String
        switch ContainerScanner.kind(of: url) {
        case .matroska: demuxer = "matroskademux"
        case .mp4: demuxer = "qtdemux"
        case .empty: throw .cannotRead(path: url.path, reason: "the file is empty (0 bytes)")
        case nil: throw .notARecording(path: url.path)
        }
        do throws(GStreamerError) { try GStreamerRuntime.ensureInitialized() } catch { throw .pipeline("\(error)") }
        let pipeline = Pipeline(name: "inspect")
        let counters = Locked<[String: RecordedFileInfo.Track]>([:])
        let sinks = Locked<[AppSink]>([])
        // Tracks the demuxer announced that could not be read (no sink for them), with why.
        let unread = Locked<[String]>([])
        let connection: SignalConnection
        do throws(GStreamerError) {
            let source = try Element(factory: "filesrc")
            try source.set("location", url.path)
            let demux = try Element(factory: demuxer)
            try pipeline.add(source)
            try pipeline.add(demux)
            try source.link(to: demux)
            connection = try demux.connect("pad-added") { arguments in
                guard case .object(let pad as Pad) = arguments[1] else { return }
                let name = pad.name
                // Counted before its sink exists: a track that cannot be read still shows, without frames.
                counters.withLock {
                    $0[name] = .init(pad: name, order: $0.count, caps: pad.currentCaps?.description ?? "", frames: 0, keyFrames: 0, texts: [])
                }
                let sink: AppSink, input: Pad
                do throws(GStreamerError) {
                    sink = try AppSink(sync: false, maxBuffers: 0, drop: false)
                    // No preroll: one streaming thread feeds every sink, and a track that starts late
                    // must not leave the others blocked waiting for it.
                    try sink.set("async", false)
                    guard let sinkPad = sink.staticPad("sink") else { throw .padNotFound(element: "appsink", pad: "sink") }
                    input = sinkPad
                } catch {
                    unread.withLock { $0.append("track \(name) not read: \(error)") }
                    return
                }
                sink.setSampleHandler { sample in
                    observe?(name, sample)
                    let time = sample.pts.map { Double($0) / 1e9 }
                    let text = (sample.caps?.mediaType ?? "").hasPrefix("text/") ? String(decoding: sample.bytes, as: UTF8.self) : nil
                    counters.withLock { counters in
                        guard var track = counters[name] else { return }
                        track.frames += 1
                        if sample.isKeyFrame { track.keyFrames += 1 }
                        track.bytes += sample.size
                        if track.caps.isEmpty, let caps = sample.caps { track.caps = caps.description }
                        if let time {
                            if let last = track.lastTime {
                                track.longestGap = max(track.longestGap, time - last)
                                if text == nil, time - last > gapThreshold, track.gaps.count < maxGapsPerTrack {
                                    track.gaps.append(.init(start: last, end: time))
                                }
                            }
                            track.firstTime = min(track.firstTime ?? time, time)
                            track.lastTime = max(track.lastTime ?? time, time)
                            if let text { track.texts.append(.init(time: time, text: text)) }
                        }
                        counters[name] = track
                    }
                }
                do {
                    try pipeline.add(sink)
                    try pad.link(to: input)
                    sink.syncStateWithParent()
                    sinks.withLock { $0.append(sink) }
                } catch {
                    pipeline.remove(sink)
                    unread.withLock { $0.append("track \(name) not read: \(error)") }
                }
            }
        } catch {
            throw .pipeline("cannot read \(url.path): \(error)")
        }
        defer {
            connection.cancel()
            pipeline.stop()
        }
        var problem: String?
        do throws(GStreamerError) {
            try await pipeline.play(timeout: timeout)
            try await pipeline.waitForEndOfStream(timeout: timeout)
        } catch {
            problem = "\(error)"
        }
        let unreadTracks = unread.value
        if !unreadTracks.isEmpty { problem = (unreadTracks + [problem].compactMap { $0 }).joined(separator: "; ") }
        // Tags are sticky on the sinks' pads until the pipeline stops.
        let titles = Dictionary(sinks.value.compactMap { sink -> (String, String)? in
            guard let pad = sink.staticPad("sink"), let peer = pad.peer, let title = pad.streamTag("title") else { return nil }
            return (peer.name, title)
        }, uniquingKeysWith: { first, _ in first })
        var tracks = counters.value.values.sorted { $0.order < $1.order }
        for index in tracks.indices { tracks[index].title = titles[tracks[index].pad] }
        if let problem, !tracks.contains(where: { $0.frames > 0 }) {
            throw .cannotRead(path: url.path, reason: problem)
        }
        return RecordedFileInfo(tracks: tracks, readProblem: problem)
    }
}
