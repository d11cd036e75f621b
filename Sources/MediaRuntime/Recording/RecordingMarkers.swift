import Foundation
import GStreamer
import MediaPipeline
import Synchronization

/// Where markers go: a chapters sidecar written atomically on every change (`<file>.chapters.json`),
/// and, in Matroska, a timed UTF-8 subtitle track named "markers" that is written as the call
/// goes, so a killed process keeps them too.
///
/// GStreamer 1.22's `matroskamux` writes chapters (its GstTocSetter TOC) only once, with the
/// header, before any mark exists, and re-writes them only when finalising; a timed text track is
/// the in-file form that survives a crash, and the sidecar gives tools the periods as ranges.
///
/// A sidecar that cannot be written is created at the start (`init` throws) or reported by the
/// change that could not be saved (`cannotWrite`); the change itself stays in `list` and the track.
///
/// A sparse track stalls `matroskamux` (GstCollectPads waits for it once the other tracks pass
/// its position, and nothing here can send GAP events), so the track also gets an empty text
/// `heartbeat` every half second.
final class RecordingMarkers: Sendable {
    /// How long a marker's text is shown by players that display the markers track.
    static let displayDuration: UInt64 = 1_000_000_000
    /// How often the markers track gets an empty text while nothing is marked.
    static let heartbeatInterval: Duration = .milliseconds(500)

    private let source: AppSource?
    private let elements: [Element]
    private let sidecar: URL?
    private let chapters = Mutex<[RecordingChapter]>([])
    private let lastTextTime = Mutex<Int64>(-1)

    /// Adds the markers track to `pipeline` when `muxer` is given (Matroska), else keeps the sidecar only.
    init(pipeline: Pipeline, muxer: Element?, prefix: String, sidecar: URL?) throws(RecordingError) {
        self.sidecar = sidecar
        try Self.persist([], to: sidecar)
        guard let muxer else {
            source = nil
            elements = []
            return
        }
        do throws(GStreamerError) {
            let source = try AppSource(name: prefix + "_src", caps: Caps("text/x-raw,format=utf8"), isLive: false)
            let tagger = try Element(factory: "taginject", name: prefix + "_title")
            try tagger.set("tags", "title=markers")
            try pipeline.add(source)
            try pipeline.add(tagger)
            try source.link(to: tagger)
            try tagger.link(pad: "src", to: muxer, pad: "subtitle_%u")
            self.source = source
            elements = [source, tagger]
        } catch {
            throw .gstreamer(error)
        }
    }

    var list: [RecordingChapter] { chapters.withLock { $0 } }

    /// Writes a text marker at `time` (nanoseconds of media time) into the track.
    func write(_ text: String, at time: Int64) {
        push(text, at: time, duration: Self.displayDuration)
    }

    /// Keeps the track's position moving (see the type's comment).
    func heartbeat(at time: Int64) {
        push("", at: time, duration: nil)
    }

    /// Pushes in time order: a text never goes before one already in the track.
    private func push(_ text: String, at time: Int64, duration: UInt64?) {
        guard let source else { return }
        lastTextTime.withLock { last in
            guard time >= 0, text.isEmpty ? time > last : true else { return }
            let stamp = max(time, last)
            last = stamp
            // appsrc refuses a buffer only while flushing or after end-of-stream: the recording is stopping.
            try? source.push(Array(text.utf8), pts: UInt64(stamp), duration: duration)
        }
    }

    var hasTrack: Bool { source != nil }

    func mark(_ label: String, at time: Int64) throws(RecordingError) {
        let (_, unsaved) = update { $0.append(RecordingChapter(kind: .mark, label: label, start: Self.seconds(time), end: nil)) }
        write(label, at: time)
        if let unsaved { throw unsaved }
    }

    /// Opens a period; a period of that name that is already open stays as it is.
    @discardableResult
    func begin(_ label: String, at time: Int64) throws(RecordingError) -> Bool {
        let (opened, unsaved) = update { chapters -> Bool in
            guard !chapters.contains(where: { $0.kind == .period && $0.label == label && $0.end == nil }) else { return false }
            chapters.append(RecordingChapter(kind: .period, label: label, start: Self.seconds(time), end: nil))
            return true
        }
        if opened { write("begin \(label)", at: time) }
        if let unsaved { throw unsaved }
        return opened
    }

    /// Closes the open period of that name; without one, nothing happens.
    @discardableResult
    func end(_ label: String, at time: Int64) throws(RecordingError) -> Bool {
        let (closed, unsaved) = update { chapters -> Bool in
            guard let index = chapters.lastIndex(where: { $0.kind == .period && $0.label == label && $0.end == nil }) else { return false }
            chapters[index].end = Self.seconds(time)
            return true
        }
        if closed { write("end \(label)", at: time) }
        if let unsaved { throw unsaved }
        return closed
    }

    /// Closes every open period at `time` (the end of the recording); throws the first sidecar
    /// write that failed, after closing them all.
    func closeAll(at time: Int64) throws(RecordingError) {
        let open = chapters.withLock { $0.filter { $0.kind == .period && $0.end == nil }.map(\.label) }
        var unsaved: RecordingError?
        for label in open {
            do throws(RecordingError) { try end(label, at: time) } catch { unsaved = unsaved ?? error }
        }
        if let unsaved { throw unsaved }
    }

    func endOfStream() { source?.endOfStream() }

    /// Applies `body` and rewrites the sidecar; the change stands even when the sidecar could not
    /// be written, which comes back as `unsaved`.
    private func update<R>(_ body: (inout [RecordingChapter]) -> R) -> (R, unsaved: RecordingError?) {
        // Persisting under the lock keeps the sidecar's writes in the order of the changes.
        chapters.withLock { chapters in
            let result = body(&chapters)
            do throws(RecordingError) {
                try Self.persist(chapters, to: sidecar)
                return (result, nil)
            } catch {
                return (result, error)
            }
        }
    }

    private static func persist(_ snapshot: [RecordingChapter], to sidecar: URL?) throws(RecordingError) {
        guard let sidecar else { return }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let data: Data
        do {
            data = try encoder.encode(ChaptersDocument(chapters: snapshot))
        } catch {
            throw .cannotWrite(path: sidecar.path, reason: "the chapters do not encode: \(error)")
        }
        try writeAtomically(data, to: sidecar)
    }

    static func seconds(_ nanoseconds: Int64) -> Double { (Double(nanoseconds) / 1e9 * 1000).rounded() / 1000 }
}

/// The JSON document of `<file>.chapters.json`.
package struct ChaptersDocument: Sendable, Codable {
    package var chapters: [RecordingChapter]
}
