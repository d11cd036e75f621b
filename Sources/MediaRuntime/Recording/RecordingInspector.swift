import Foundation
import GStreamer
import Synchronization

/// What a recorded file holds, read back by demuxing it to the end: per track its format, how
/// many frames it has and the times of the first and last one. It reads files that were never
/// finalised (a killed recorder) too, as long as they play.
public struct RecordedFileInfo: Sendable {
    public struct Track: Sendable {
        /// The demuxer's pad name, e.g. "video_0", "audio_1", "subtitle_0".
        public var pad: String
        public var caps: String
        public var frames: Int
        public var keyFrames: Int
        /// Seconds on the file's timeline.
        public var firstTime: Double?
        public var lastTime: Double?
        /// The longest stretch without a frame between the first and the last one, in seconds.
        public var longestGap: Double = 0
        /// The texts of a text track (the markers track), with their times in seconds.
        public var texts: [TimedText]

        public var mediaType: String { String(caps.prefix { $0 != "," }) }
        public var isVideo: Bool { mediaType.hasPrefix("video/") }
        public var isAudio: Bool { mediaType.hasPrefix("audio/") }
        public var isText: Bool { mediaType.hasPrefix("text/") }
    }

    public struct TimedText: Sendable, Hashable {
        public var time: Double
        public var text: String
    }

    public var tracks: [Track]
    public var videoTracks: [Track] { tracks.filter(\.isVideo) }
    public var audioTracks: [Track] { tracks.filter(\.isAudio) }
    public var textTracks: [Track] { tracks.filter(\.isText) }
    /// The latest frame time of any track, in seconds.
    public var lastTime: Double? { tracks.compactMap(\.lastTime).max() }
}

public enum RecordingInspector {
    /// Demuxes `url` (Matroska, WebM or MP4, by extension) as fast as possible and counts frames.
    public static func inspect(_ url: URL, timeout: Duration = .seconds(60)) async throws(RecordingError) -> RecordedFileInfo {
        do throws(GStreamerError) { try GStreamerRuntime.ensureInitialized() } catch { throw .gstreamer(error) }
        let demuxer = url.pathExtension.lowercased() == "mp4" ? "qtdemux" : "matroskademux"
        let pipeline = Pipeline(name: "inspect")
        let counters = Locked<[String: RecordedFileInfo.Track]>([:])
        let sinks = Locked<[AppSink]>([])
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
                // No preroll: one streaming thread feeds every sink, and a track that starts late
                // must not leave the others blocked waiting for it.
                guard let sink = try? AppSink(sync: false, maxBuffers: 0, drop: false), let input = sink.staticPad("sink"),
                      (try? sink.set("async", false)) != nil else { return }
                counters.withLock { $0[name] = .init(pad: name, caps: pad.currentCaps?.description ?? "", frames: 0, keyFrames: 0, texts: []) }
                sink.setSampleHandler { sample in
                    let time = sample.pts.map { Double($0) / 1e9 }
                    let text = (sample.caps?.mediaType ?? "").hasPrefix("text/") ? String(decoding: sample.bytes, as: UTF8.self) : nil
                    counters.withLock { counters in
                        guard var track = counters[name] else { return }
                        track.frames += 1
                        if sample.isKeyFrame { track.keyFrames += 1 }
                        if track.caps.isEmpty, let caps = sample.caps { track.caps = caps.description }
                        if let time {
                            if let last = track.lastTime { track.longestGap = max(track.longestGap, time - last) }
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
                }
            }
        } catch {
            throw .gstreamer(error)
        }
        defer {
            connection.cancel()
            pipeline.stop()
        }
        do throws(GStreamerError) {
            try await pipeline.play(timeout: timeout)
            try await pipeline.waitForEndOfStream(timeout: timeout)
        } catch {
            throw .pipeline("cannot read \(url.path) back: \(error)")
        }
        return RecordedFileInfo(tracks: counters.value.values.sorted { $0.pad < $1.pad })
    }
}
